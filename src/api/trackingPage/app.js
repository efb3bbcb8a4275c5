/**
 * The tracking page's script: plain browser JavaScript served as /t/app.js (no build step, no dependency).
 *
 * It reads the routeId from the path (/t/rt_…) and the statusToken from the fragment (#st_…). A browser never sends
 * a fragment to a server, not in the page's own request and not in a Referer, so the token reaches the service only
 * as the Authorization header of this script's API calls. It asks GET /api/private-route/<routeId> at a fixed
 * interval for as long as the page is open, also after COMPLETED or FAILED; with the API's padded answers (X-Padding)
 * whoever watches this connection sees the same traffic whatever the transfer does (docs/privacy.md). Without a token, or with a wrong one, it shows the public view only.
 * Everything it shows is set as text, never as HTML, so nothing in an answer can run on the page.
 */
import { exactUnits, roundedUnits } from './amounts.js';

/** Seconds between two reads of the full view. */
const POLL_SECONDS = 3;
/** The public view changes only as an exit epoch begins, and its reads are rate limited: ask seldom. */
const PUBLIC_POLL_SECONDS = 30;
const TERMINAL = new Set(['COMPLETED', 'FAILED']);

/** Every status of a transfer that goes well, in order, with the words the page shows for it. */
const STEPS = [
  ['AWAITING_DEPOSIT', 'Waiting for the deposit'],
  ['BRIDGING_IN', 'Deposit received, bridging it to the hub chain'],
  ['RECEIVED_ON_HUB', 'Arrived on the hub chain'],
  ['SHIELDED', 'In the privacy pool'],
  ['UNSHIELD_SENT', 'Leaving the privacy pool'],
  ['BRIDGING_OUT', 'Bridging to the destination chain'],
  ['COMPLETED', 'Completed, the recipient has been paid'],
];
const WORDS = new Map([...STEPS, ['FAILED', 'Failed']]);
/** The public view folds everything between the deposit and the end into BRIDGING_IN. */
const PUBLIC_WORDS = new Map([
  ['AWAITING_DEPOSIT', 'Waiting for the deposit'],
  ['BRIDGING_IN', 'In progress'],
  ['COMPLETED', 'Completed'],
  ['FAILED', 'Failed'],
]);

/** A FAILED transfer's failureCode (docs/api.md, "Outcomes") in words. */
const FAILURE_WORDS = new Map([
  ['NOT_STARTED', 'The transfer could not be started. Do not send a deposit to it.'],
  ['DEPOSIT_EXPIRED', 'No deposit arrived before the deadline.'],
  ['DEPOSIT_TOO_SMALL', 'Less than the amount arrived before the deadline.'],
  ['DEPOSIT_FROM_RECIPIENT', 'The deposit came from the recipient’s own address, which would link the payment to it; it was sent back.'],
  ['BRIDGE_FAILED', 'The bridge to the hub chain did not carry the deposit.'],
  ['PRIVACY_POOL_REJECTED', 'The privacy pool did not accept the deposit.'],
  ['PRIVACY_POOL_FAILED', 'Moving the funds through the privacy pool did not go through.'],
  ['PAYOUT_FAILED', 'The payment to the recipient did not go through.'],
  ['REFUND_FAILED', 'Sending the deposit back did not go through.'],
  ['OPERATOR_FAILED', 'The service’s operator ended the transfer.'],
  ['INTERNAL', 'Something went wrong in the service.'],
]);

const NO_TOKEN_NOTICE =
  'This link holds no key (the part after #), so only the public status is shown: it is updated hours late on purpose and hides the steps in between. Open the link the transfer was created with to see everything.';
const WRONG_TOKEN_NOTICE =
  'The key in this link does not open this transfer (it is incomplete, or belongs to another one), so only the public status is shown: it is updated hours late on purpose. Check the link.';

const byId = (id) => document.getElementById(id);
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An element with attributes and children (strings become text nodes, never HTML). */
function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** A time as the reader's locale writes it, machine-readable in `datetime`. */
const timeElement = (iso) => element('time', { datetime: iso }, dateTime.format(new Date(iso)));

/**
 * An amount rounded for reading (amounts.js), its every digit in the title and copied by the button beside it; an
 * amount shown exactly needs neither.
 */
function amountElement(units, decimals, symbol) {
  const rounded = roundedUnits(units, decimals, symbol);
  if (rounded.exact) return element('span', { class: 'amount' }, `${rounded.text} ${symbol}`);
  const exact = `${exactUnits(units, decimals)} ${symbol}`;
  const copy = element('button', { type: 'button', class: 'copy', 'aria-label': `Copy the exact amount, ${exact}` }, 'copy');
  copy.addEventListener('click', () => {
    navigator.clipboard?.writeText(exact).then(
      () => {
        copy.textContent = 'copied';
      },
      () => {},
    );
  });
  return element(
    'span',
    { class: 'amount' },
    element('span', { class: 'rounded', title: exact, 'data-exact': exact }, `≈ ${rounded.text} ${symbol}`),
    ' ',
    copy,
  );
}

/** Parts shown together in one value: elements and text side by side. */
const together = (...parts) => element('span', {}, ...parts);

/** '45 s', '3 min 20 s', '2 h 5 min'. */
function formatDuration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
}

/** GET `path` from this server, with the statusToken in the Authorization header when there is one. */
async function getJson(path, token) {
  const response = await fetch(path, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    cache: 'no-store',
    credentials: 'omit',
  });
  const body = await response.json().catch(() => null);
  return { status: response.status, body };
}

/**
 * Chain names, asked of the service's discovery endpoint once (the full view names chains by id), and the tokens'
 * decimals, which the full view carries (sourceToken, destToken). Without them: chain ids and smallest units.
 */
async function loadNames(transfer) {
  const chains = new Map();
  const decimals = new Map();
  try {
    const answer = await getJson('/api/bridge/chains');
    for (const chain of answer.body?.data ?? []) chains.set(chain.chainId, chain.displayName || chain.name);
  } catch {
    // Chain ids it is.
  }
  const tokens = [
    [transfer.sourceChainId, transfer.symbol, transfer.sourceToken],
    [transfer.destChainId, transfer.destSymbol, transfer.destToken],
  ];
  for (const [chainId, symbol, token] of tokens) {
    if (token && Number.isInteger(token.decimals)) decimals.set(`${chainId}:${symbol}`, token.decimals);
  }
  return {
    chain: (chainId) => chains.get(chainId) ?? `chain ${chainId}`,
    /** Rounded for reading, the exact value a hover or a click away. */
    amount(units, chainId, symbol) {
      const places = symbol ? decimals.get(`${chainId}:${symbol}`) : undefined;
      return places === undefined ? `${units} (smallest units of ${symbol ?? 'the token'})` : amountElement(units, places, symbol);
    },
    /** Every digit: what a sender must send exactly. */
    exactAmount(units, chainId, symbol) {
      const places = decimals.get(`${chainId}:${symbol}`);
      return places === undefined ? `${units} (smallest units of ${symbol})` : `${exactUnits(units, places)} ${symbol}`;
    },
  };
}

/** The page's parts, found once. */
const page = {
  routeId: byId('route-id'),
  warning: byId('secret-warning'),
  status: byId('status'),
  notice: byId('notice'),
  deposit: byId('deposit'),
  depositDetails: byId('deposit-details'),
  failure: byId('failure'),
  failureReason: byId('failure-reason'),
  failureText: byId('failure-text'),
  refund: byId('refund'),
  refundList: byId('refund-list'),
  progress: byId('progress'),
  steps: byId('steps'),
  eta: byId('eta'),
  amounts: byId('amounts'),
  amountDetails: byId('amount-details'),
  transactions: byId('transactions'),
  transactionList: byId('transaction-list'),
  privacy: byId('privacy'),
  privacyText: byId('privacy-text'),
  privacyDetails: byId('privacy-details'),
};
/** The sections only the full view fills. */
const PRIVATE_SECTIONS = [page.deposit, page.failure, page.refund, page.progress, page.amounts, page.transactions, page.privacy];

/** The status line is a live region: it changes only when the status does, so a screen reader announces each once. */
function showStatus(status, words) {
  const text = `Status: ${words}`;
  if (page.status.textContent === text) return;
  page.status.textContent = text;
  page.status.dataset.status = status;
  document.title = `${words} · Transfer status`;
}

function showNotice(text) {
  page.notice.textContent = text ?? '';
  page.notice.hidden = !text;
}

/** A definition list's rows: [term, value] pairs, values as text or elements. */
function fillDetails(list, rows) {
  list.replaceChildren(...rows.flatMap(([term, value]) => [element('dt', {}, term), element('dd', { class: 'value' }, value)]));
}

function renderPublic(view) {
  for (const section of PRIVATE_SECTIONS) section.hidden = true;
  const words = PUBLIC_WORDS.get(view.status) ?? view.status;
  showStatus(view.status, view.needsAttention ? `${words} (an operator has been asked to look at it)` : words);
  if (view.status === 'FAILED' && (view.error || view.failureCode)) {
    showFailure(view);
    page.failure.hidden = false;
  }
}

/** Why it failed: the failureCode in words, then the service's own text. */
function showFailure(view) {
  page.failureReason.textContent = FAILURE_WORDS.get(view.failureCode) ?? '';
  page.failureReason.hidden = !FAILURE_WORDS.has(view.failureCode);
  page.failureReason.dataset.code = view.failureCode ?? '';
  page.failureText.textContent = view.error ?? '';
}

function renderFull(transfer, names) {
  const words = WORDS.get(transfer.status) ?? transfer.status;
  showStatus(transfer.status, transfer.needsAttention ? `${words} (waiting for an operator to look at it; nothing is lost meanwhile)` : words);

  page.deposit.hidden = transfer.status !== 'AWAITING_DEPOSIT';
  fillDetails(page.depositDetails, [
    ['Send exactly', names.exactAmount(transfer.amount, transfer.sourceChainId, transfer.symbol)],
    ['On', names.chain(transfer.sourceChainId)],
    ['To the address', element('code', {}, transfer.depositAddress)],
    ['Token contract', element('code', {}, transfer.depositTokenAddress)],
    ['Before', timeElement(transfer.depositDeadline)],
  ]);

  page.failure.hidden = transfer.status !== 'FAILED' || !(transfer.error || transfer.failureCode);
  showFailure(transfer);
  renderRefunds(transfer, names);

  renderSteps(transfer);

  page.amounts.hidden = false;
  const received = transfer.status === 'COMPLETED' ? 'Recipient received' : 'Recipient will receive';
  // What arrived, once anything did or the transfer stopped waiting: an under-funded deposit shows what came.
  const arrived =
    transfer.depositedAmount !== undefined && (transfer.depositedAmount !== '0' || transfer.status !== 'AWAITING_DEPOSIT')
      ? [['Deposit received', names.amount(transfer.depositedAmount, transfer.sourceChainId, transfer.symbol)]]
      : [];
  fillDetails(page.amountDetails, [
    ['You send', together(names.amount(transfer.amount, transfer.sourceChainId, transfer.symbol), ` on ${names.chain(transfer.sourceChainId)}`)],
    ...arrived,
    [received, together(names.amount(transfer.quotedOutputAmount, transfer.destChainId, transfer.destSymbol), ` on ${names.chain(transfer.destChainId)}`)],
    ['Service fee (included)', names.amount(transfer.feeAmount, transfer.destChainId, transfer.destSymbol)],
    ['Recipient', element('code', {}, transfer.userDestinationAddress)],
  ]);

  renderTransactions(transfer, names);
  renderPrivacy(transfer);
}

/** The ordered steps: every status reached (with its time), then the ones still to come. */
function renderSteps(transfer) {
  const history = transfer.statusHistory?.length ? transfer.statusHistory : [{ status: transfer.status, at: transfer.updatedAt }];
  const position = STEPS.findIndex(([status]) => status === transfer.status);
  const upcoming = TERMINAL.has(transfer.status) || position < 0 ? [] : STEPS.slice(position + 1).map(([status]) => status);
  const last = history.length - 1;
  const reached = history.map((entry, i) => {
    const current = i === last;
    const failed = entry.status === 'FAILED';
    const mark = failed ? '✗' : current && !TERMINAL.has(entry.status) ? '▶' : '✓';
    const when = current && !TERMINAL.has(entry.status) ? 'Current step, since ' : failed ? 'Failed at ' : 'Done at ';
    return element(
      'li',
      { class: current ? 'current' : 'done', 'data-status': entry.status, ...(current ? { 'aria-current': 'step' } : {}) },
      element('span', { class: 'mark', 'aria-hidden': 'true' }, mark),
      element('span', { class: 'name' }, WORDS.get(entry.status) ?? entry.status),
      element('span', { class: 'when' }, when, timeElement(entry.at)),
    );
  });
  const toCome = upcoming.map((status) =>
    element(
      'li',
      { class: 'upcoming', 'data-status': status },
      element('span', { class: 'mark', 'aria-hidden': 'true' }, '○'),
      element('span', { class: 'name' }, WORDS.get(status)),
      element('span', { class: 'when' }, 'Not yet'),
    ),
  );
  page.steps.replaceChildren(...reached, ...toCome);
  page.progress.hidden = false;

  const funded = history.find((entry) => entry.status === 'BRIDGING_IN');
  const eta = formatDuration(transfer.etaSeconds);
  if (transfer.status === 'COMPLETED' && funded && transfer.completedAt) {
    page.eta.textContent = `It took ${formatDuration((Date.parse(transfer.completedAt) - Date.parse(funded.at)) / 1000)} from the deposit (estimate: about ${eta}).`;
  } else if (transfer.status === 'FAILED') {
    page.eta.textContent = '';
  } else if (funded) {
    const expected = new Date(Date.parse(funded.at) + transfer.etaSeconds * 1000);
    const late = expected.getTime() < Date.now() ? ' It is taking longer than estimated; it goes on by itself.' : '';
    page.eta.replaceChildren(`Expected around `, timeElement(expected.toISOString()), ` (about ${eta} after the deposit).${late}`);
  } else {
    page.eta.textContent = `Takes about ${eta} once the deposit arrives.`;
  }
}

/** The three transactions the full view names, each linked to its explorer where the chain has one. */
function renderTransactions(transfer, names) {
  const rows = [
    ['Deposit', transfer.depositTxHash, transfer.sourceChainId, transfer.explorerLinks?.depositTx],
    ['Bridge to the hub', transfer.bridgeInTxHash, transfer.sourceChainId, transfer.explorerLinks?.bridgeInTx],
    ['Payment to the recipient', transfer.payoutTxHash, transfer.destChainId, transfer.explorerLinks?.payoutTx],
  ].filter(([, hash]) => hash);
  page.transactions.hidden = rows.length === 0;
  page.transactionList.replaceChildren(
    ...rows.map(([label, hash, chainId, link]) =>
      element('li', { 'data-hash': hash }, element('strong', {}, label), ` on ${names.chain(chainId)}: `, transactionElement(hash, link)),
    ),
  );
}

/** A transaction hash, linked to its explorer page where there is one (https only). */
function transactionElement(hash, link) {
  return isHttps(link)
    ? element('a', { href: link, target: '_blank', rel: 'noreferrer noopener' }, element('code', {}, hash), ' (explorer, opens a new tab)')
    : element('code', {}, hash);
}

/** The refunds sent from the deposit address: how much went back, and in which transaction. */
function renderRefunds(transfer, names) {
  const refunds = transfer.refunds ?? [];
  page.refund.hidden = refunds.length === 0;
  page.refundList.replaceChildren(
    ...refunds.map((refund) =>
      element(
        'li',
        { 'data-hash': refund.txHash },
        element('strong', {}, 'Sent back '),
        names.amount(refund.amount, refund.chainId, refund.symbol),
        ` on ${names.chain(refund.chainId)}: `,
        transactionElement(refund.txHash, refund.explorerUrl),
      ),
    ),
  );
}

/** The service gives only https explorer pages; anything else is shown as text, never as a link. */
function isHttps(link) {
  try {
    return typeof link === 'string' && new URL(link).protocol === 'https:';
  } catch {
    return false;
  }
}

function renderPrivacy(transfer) {
  page.privacy.hidden = false;
  const report = transfer.privacy;
  if (!report) {
    page.privacyDetails.replaceChildren();
    page.privacyText.textContent = TERMINAL.has(transfer.status)
      ? 'No report: this transfer did not leave the privacy pool.'
      : `Given once the transfer has left the privacy pool. It waits there for an anonymity set of at least ${transfer.minAnonymitySet} (transfers an observer cannot tell apart, its own included), or at most the longest wait the service allows.`;
    return;
  }
  page.privacyText.textContent =
    'How many transfers, this one included, an observer of the public chains cannot tell this one apart from, and how long it waited in the pool for them.';
  fillDetails(page.privacyDetails, [
    ['Anonymity set', `${report.anonymitySet} (it waited for at least ${transfer.minAnonymitySet})`],
    ['Time in the pool', formatDuration(report.waitedSeconds)],
    ['Left at the longest wait', report.leftAtMaxWait ? `Yes: it left with fewer than ${transfer.minAnonymitySet}` : 'No'],
  ]);
}

const sleep = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Reads the transfer until it ends, showing each answer. */
async function follow(routeId, statusToken) {
  let token = statusToken || undefined;
  let lasting = token ? undefined : NO_TOKEN_NOTICE;
  let names;
  let shown;
  page.warning.hidden = !token;
  for (;;) {
    try {
      const answer = await getJson(`/api/private-route/${routeId}`, token);
      if (answer.status === 401 && token) {
        token = undefined;
        lasting = WRONG_TOKEN_NOTICE;
        page.warning.hidden = true;
        continue;
      }
      if (answer.status === 404) {
        showStatus('UNKNOWN', 'no transfer has this id; check the link');
        showNotice(undefined);
        return;
      }
      if (!answer.body?.success) throw new Error(answer.body?.error ?? `HTTP ${answer.status}`);
      const view = answer.body.data;
      showNotice(lasting);
      // The page is drawn again only when the answer changed: a focused link stays focused between reads.
      const drawn = JSON.stringify(view);
      if (drawn !== shown) {
        if (token) renderFull(view, (names ??= await loadNames(view)));
        else renderPublic(view);
        shown = drawn;
      }
      // The reads go on at the same pace after the end: stopping would tell whoever watches this connection when
      // the transfer was paid.
    } catch {
      showNotice('The service did not answer; trying again in a few seconds.');
    }
    await sleep(token ? POLL_SECONDS : PUBLIC_POLL_SECONDS);
  }
}

const routeId = location.pathname.slice(location.pathname.lastIndexOf('/') + 1);
page.routeId.textContent = routeId;
// A new key pasted into the address bar changes only the fragment: start again with it.
window.addEventListener('hashchange', () => location.reload());
follow(routeId, location.hash.slice(1));
