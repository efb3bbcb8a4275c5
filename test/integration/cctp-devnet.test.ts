import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  concat,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  erc20Abi,
  hexToBigInt,
  http,
  keccak256,
  pad,
  parseAbi,
  recoverAddress,
  size,
  slice,
  toEventSelector,
  toFunctionSelector,
  zeroHash,
  type Abi,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, sign } from 'viem/accounts';
import { messageTransmitterV2Abi } from '../../devnet/artifacts/MessageTransmitterV2.ts';
import { tokenMessengerV2Abi } from '../../devnet/artifacts/TokenMessengerV2.ts';
import { DEVNET_CCTP_ATTESTER_KEY, DEVNET_CCTP_DOMAINS } from '../../devnet/cctp.ts';
import { DEVNET_ACCOUNTS, startDevnetChains, type DevnetChains } from '../../devnet/chains.ts';
import { freeChainPorts } from '../../devnet/ports.ts';
import type { ChainRole } from '../../devnet/manifest.ts';
import { createFaultRegistry } from '../../devnet/emulators/faults.ts';
import { startIrisEmulator, type IrisEmulator } from '../../devnet/emulators/iris/index.ts';

// The real CCTP v2 interface (circlefin/evm-cctp-contracts/src/v2), written out here rather than taken
// from our artifacts: a client built against Circle's contracts must work unchanged against the devnet.
const tokenMessengerV2 = parseAbi([
  'function depositForBurn(uint256 amount, uint32 destinationDomain, bytes32 mintRecipient, address burnToken, bytes32 destinationCaller, uint256 maxFee, uint32 minFinalityThreshold)',
  'function depositForBurnWithHook(uint256 amount, uint32 destinationDomain, bytes32 mintRecipient, address burnToken, bytes32 destinationCaller, uint256 maxFee, uint32 minFinalityThreshold, bytes hookData)',
  'function handleReceiveFinalizedMessage(uint32 remoteDomain, bytes32 sender, uint32 finalityThresholdExecuted, bytes messageBody) returns (bool)',
  'function handleReceiveUnfinalizedMessage(uint32 remoteDomain, bytes32 sender, uint32 finalityThresholdExecuted, bytes messageBody) returns (bool)',
  'function localMessageTransmitter() view returns (address)',
  'function localMinter() view returns (address)',
  'function remoteTokenMessengers(uint32 domain) view returns (bytes32)',
  'function feeRecipient() view returns (address)',
  'function messageBodyVersion() view returns (uint32)',
  'event DepositForBurn(address indexed burnToken, uint256 amount, address indexed depositor, bytes32 mintRecipient, uint32 destinationDomain, bytes32 destinationTokenMessenger, bytes32 destinationCaller, uint256 maxFee, uint32 indexed minFinalityThreshold, bytes hookData)',
  'event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected)',
]);
const messageTransmitterV2 = parseAbi([
  'function receiveMessage(bytes message, bytes attestation) returns (bool success)',
  'function sendMessage(uint32 destinationDomain, bytes32 recipient, bytes32 destinationCaller, uint32 minFinalityThreshold, bytes messageBody)',
  'function usedNonces(bytes32 nonce) view returns (uint256)',
  'function localDomain() view returns (uint32)',
  'function version() view returns (uint32)',
  'function signatureThreshold() view returns (uint256)',
  'function isEnabledAttester(address attester) view returns (bool)',
  'event MessageSent(bytes message)',
  'event MessageReceived(address indexed caller, uint32 sourceDomain, bytes32 indexed nonce, bytes32 sender, uint32 indexed finalityThresholdExecuted, bytes messageBody)',
]);

const AMOUNT = 100_000_000n; // 100 USDC
const PENDING_MS = 200;

interface IrisMessage {
  message: Hex;
  eventNonce: Hex;
  attestation: Hex | 'PENDING';
  status: 'complete' | 'pending_confirmations';
  cctpVersion: number;
  delayReason: string | null;
  decodedMessage: null | {
    sourceDomain: string;
    destinationDomain: string;
    nonce: Hex;
    finalityThresholdExecuted: string;
    decodedMessageBody?: { amount: string; maxFee: string; feeExecuted: string; expirationBlock: string; mintRecipient: Address };
  };
}

const faucet = privateKeyToAccount(DEVNET_ACCOUNTS.faucet);
const treasury = privateKeyToAccount(DEVNET_ACCOUNTS.treasury).address;
const attester = privateKeyToAccount(DEVNET_CCTP_ATTESTER_KEY).address;
const stateDir = mkdtempSync(join(tmpdir(), 'cctp-devnet-test-'));
const faults = createFaultRegistry();
let ports: { source: number; hub: number; destination: number };
let chains: DevnetChains | undefined;
let iris: IrisEmulator | undefined;

before(async () => {
  ports = await freeChainPorts();
  chains = await startDevnetChains({ ports, cctp: true, stateDir });
  iris = await startIrisEmulator({ manifest: chains.manifest, port: 0, attesterPrivateKey: DEVNET_CCTP_ATTESTER_KEY, faults, pendingMs: PENDING_MS });
});

after(async () => {
  await iris?.stop();
  await chains?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

test('the devnet contracts expose the real CCTP v2 functions and events, one domain per chain', async () => {
  const missing = [
    ...signatures(tokenMessengerV2).filter((s) => !signatures(tokenMessengerV2Abi).includes(s)),
    ...signatures(messageTransmitterV2).filter((s) => !signatures(messageTransmitterV2Abi).includes(s)),
  ];
  assert.deepEqual(missing, []);

  for (const role of ['source', 'hub', 'destination'] as const) {
    const c = cctp(role);
    assert.equal(c.domain, DEVNET_CCTP_DOMAINS[role]);
    const read = client(role);
    assert.equal(await read.readContract({ address: c.messageTransmitter, abi: messageTransmitterV2, functionName: 'localDomain' }), c.domain);
    assert.equal(await read.readContract({ address: c.messageTransmitter, abi: messageTransmitterV2, functionName: 'version' }), 1);
    assert.equal(
      await read.readContract({ address: c.messageTransmitter, abi: messageTransmitterV2, functionName: 'isEnabledAttester', args: [attester] }),
      true,
    );
    assert.equal(await read.readContract({ address: c.tokenMessenger, abi: tokenMessengerV2, functionName: 'feeRecipient' }), treasury);
    for (const other of (['source', 'hub', 'destination'] as const).filter((r) => r !== role)) {
      const remote = await read.readContract({
        address: c.tokenMessenger,
        abi: tokenMessengerV2,
        functionName: 'remoteTokenMessengers',
        args: [cctp(other).domain],
      });
      assert.equal(remote, pad(cctp(other).tokenMessenger).toLowerCase());
    }
  }
});

test('Iris answers the v2 fee shape, 400 for an unknown domain and 404 for an unknown transaction', async () => {
  const fees = await irisGet(`/v2/burn/USDC/fees/${DEVNET_CCTP_DOMAINS.source}/${DEVNET_CCTP_DOMAINS.hub}`);
  assert.equal(fees.status, 200);
  assert.deepEqual(fees.body, [
    { finalityThreshold: 1000, minimumFee: 1 },
    { finalityThreshold: 2000, minimumFee: 0 },
  ]);
  assert.equal((await irisGet(`/v2/burn/USDC/fees/0/${DEVNET_CCTP_DOMAINS.hub}`)).status, 400);

  const unknown = await irisGet(`/v2/messages/${DEVNET_CCTP_DOMAINS.source}?transactionHash=${keccak256('0x01')}`);
  assert.equal(unknown.status, 404);
  assert.deepEqual(unknown.body, { error: 'Message hash not found' });

  // Re-attestation (POST /v2/reattest/{nonce}): a malformed nonce is 400, one Iris never attested 404.
  const reattest = async (nonce: string) => {
    const res = await fetch(`${irisUrl()}/v2/reattest/${nonce}`, { method: 'POST' });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  assert.equal((await reattest('42')).status, 400);
  assert.deepEqual(await reattest(keccak256('0x02')), { status: 404, body: { error: 'Message not found' } });
});

let fastNonce: Hex | undefined;
let fastTxHash: Hex | undefined;

test('fast transfer source → hub: pending, then attested with the fee; minted once to recipient and fee recipient', async () => {
  const fees = (await irisGet(`/v2/burn/USDC/fees/${DEVNET_CCTP_DOMAINS.source}/${DEVNET_CCTP_DOMAINS.hub}`)).body as {
    finalityThreshold: number;
    minimumFee: number;
  }[];
  const fastBps = fees.find((f) => f.finalityThreshold === 1000)!.minimumFee;
  const maxFee = (AMOUNT * BigInt(fastBps)) / 10_000n;
  const recipient = freshAddress();

  const receipt = await depositForBurn({ from: 'source', to: 'hub', recipient, maxFee, minFinalityThreshold: 1000 });
  fastTxHash = receipt.transactionHash;
  const deposit = eventOf(receipt, tokenMessengerV2, 'DepositForBurn');
  assert.deepEqual(
    {
      amount: deposit.amount,
      mintRecipient: deposit.mintRecipient,
      destinationDomain: deposit.destinationDomain,
      maxFee: deposit.maxFee,
      minFinalityThreshold: deposit.minFinalityThreshold,
    },
    { amount: AMOUNT, mintRecipient: pad(recipient).toLowerCase(), destinationDomain: DEVNET_CCTP_DOMAINS.hub, maxFee, minFinalityThreshold: 1000 },
  );
  const emitted = eventOf(receipt, messageTransmitterV2, 'MessageSent').message as Hex;
  assert.equal(slice(emitted, 12, 44), zeroHash, 'the emitted message has no nonce yet');

  const { first, final } = await pollIris('source', receipt.transactionHash);
  assert.equal(first.status, 'pending_confirmations');
  assert.equal(first.attestation, 'PENDING');
  assert.equal(final.status, 'complete');
  assert.equal(final.cctpVersion, 2);

  const { message } = final;
  const feeExecuted = maxFee;
  fastNonce = slice(message, 12, 44);
  assert.notEqual(fastNonce, zeroHash);
  assert.equal(final.eventNonce, fastNonce);
  assert.equal(Number(slice(message, 144, 148)), 1000, 'finalityThresholdExecuted');
  assert.equal(hexToBigInt(slice(message, 148 + 164, 148 + 196)), feeExecuted, 'feeExecuted');
  assert.ok(hexToBigInt(slice(message, 148 + 196, 148 + 228)) > 0n, 'expirationBlock');
  assert.equal(size(message), size(emitted));
  assert.equal(final.decodedMessage?.decodedMessageBody?.feeExecuted, String(feeExecuted));
  assert.equal(final.decodedMessage?.decodedMessageBody?.mintRecipient, recipient);
  assert.equal(await recoverAddress({ hash: keccak256(message), signature: final.attestation as Hex }), attester);

  const again = await pollIris('source', receipt.transactionHash);
  assert.deepEqual(again.final, final, 'the same transaction always yields the same message and attestation');

  const treasuryBefore = await usdcBalance('hub', treasury);
  const received = await receiveMessage('hub', message, final.attestation as Hex);
  assert.equal(await usdcBalance('hub', recipient), AMOUNT - feeExecuted);
  assert.equal((await usdcBalance('hub', treasury)) - treasuryBefore, feeExecuted);
  assert.equal(await usedNonce('hub', fastNonce), 1n);

  const messageReceived = eventOf(received, messageTransmitterV2, 'MessageReceived');
  assert.equal(messageReceived.nonce, fastNonce);
  assert.equal(messageReceived.sourceDomain, DEVNET_CCTP_DOMAINS.source);
  assert.equal(messageReceived.finalityThresholdExecuted, 1000);
  const minted = eventOf(received, tokenMessengerV2, 'MintAndWithdraw');
  assert.deepEqual(
    { mintRecipient: minted.mintRecipient, amount: minted.amount, feeCollected: minted.feeCollected },
    { mintRecipient: recipient, amount: AMOUNT - feeExecuted, feeCollected: feeExecuted },
  );

  await assert.rejects(receiveMessage('hub', message, final.attestation as Hex), /Nonce already used/);
});

test('standard transfer: finalized handler, no fee; forged attestations, other domains and unknown senders are rejected', async () => {
  const recipient = freshAddress();
  const receipt = await depositForBurn({ from: 'source', to: 'hub', recipient, maxFee: 0n, minFinalityThreshold: 2000 });
  const { final } = await pollIris('source', receipt.transactionHash);
  const { message } = final;
  const attestation = final.attestation as Hex;
  assert.equal(final.decodedMessage?.finalityThresholdExecuted, '2000');
  assert.equal(final.decodedMessage?.decodedMessageBody?.feeExecuted, '0');

  const forged = await sign({ hash: keccak256(message), privateKey: generatePrivateKey(), to: 'hex' });
  await assert.rejects(receiveMessage('hub', message, forged), /Invalid signature: not attester/);
  await assert.rejects(receiveMessage('destination', message, attestation), /Invalid destination domain/);
  // A message the attester signed but that no registered TokenMessenger sent.
  const foreign = concat([slice(message, 0, 44), pad(freshAddress()), slice(message, 76)]);
  const foreignAttestation = await sign({ hash: keccak256(foreign), privateKey: DEVNET_CCTP_ATTESTER_KEY, to: 'hex' });
  await assert.rejects(receiveMessage('hub', foreign, foreignAttestation), /Remote TokenMessenger unsupported/);

  const treasuryBefore = await usdcBalance('hub', treasury);
  const received = await receiveMessage('hub', message, attestation);
  assert.equal(eventOf(received, messageTransmitterV2, 'MessageReceived').finalityThresholdExecuted, 2000);
  assert.equal(await usdcBalance('hub', recipient), AMOUNT);
  assert.equal(await usdcBalance('hub', treasury), treasuryBefore);
});

test('a fast burn whose maxFee is below the fast fee is attested at finality, without a fee', async () => {
  const receipt = await depositForBurn({ from: 'destination', to: 'source', recipient: freshAddress(), maxFee: 0n, minFinalityThreshold: 1000 });
  const { final } = await pollIris('destination', receipt.transactionHash);
  assert.equal(final.decodedMessage?.finalityThresholdExecuted, '2000');
  assert.equal(final.decodedMessage?.decodedMessageBody?.feeExecuted, '0');
});

test("fault injection: 'fail' answers 500 once, 'delay' keeps a bridge-out burn pending longer", async () => {
  assert.ok(fastTxHash, 'the fast transfer test ran');
  const set = await fetch(`${irisUrl()}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ operation: 'bridge-in', mode: 'fail', count: 1 }),
  });
  assert.equal(set.status, 200);
  const path = `/v2/messages/${DEVNET_CCTP_DOMAINS.source}?transactionHash=${fastTxHash}`;
  assert.equal((await irisGet(path)).status, 500);
  assert.equal((await irisGet(path)).status, 200);

  const delayMs = 600;
  faults.set({ operation: 'bridge-out', mode: 'delay', delayMs, count: 1 });
  const receipt = await depositForBurn({ from: 'hub', to: 'destination', recipient: freshAddress(), maxFee: 0n, minFinalityThreshold: 2000 });
  const started = Date.now();
  const { final } = await pollIris('hub', receipt.transactionHash);
  assert.ok(Date.now() - started >= PENDING_MS + delayMs - 50, 'the attestation waited for the delay');
  assert.equal(final.status, 'complete');
  assert.deepEqual(faults.list(), []);
});

test('a restart with the saved state reuses the CCTP deployment and keeps used nonces', async () => {
  assert.ok(chains && fastNonce);
  const before = chains.manifest.cctp;
  await iris?.stop();
  await chains.stop();
  chains = await startDevnetChains({ ports, cctp: true, stateDir });
  assert.deepEqual(chains.manifest.cctp, before);
  assert.equal(await usedNonce('hub', fastNonce), 1n);
});

// ---------------------------------------------------------------------------------------------

function manifest() {
  assert.ok(chains, 'chains are running');
  return chains.manifest;
}

function irisUrl(): string {
  assert.ok(iris, 'Iris emulator is running');
  return iris.url;
}

function chainOf(role: ChainRole) {
  const chain = manifest().chains.find((c) => c.role === role);
  assert.ok(chain, `manifest has the ${role} chain`);
  return chain;
}

function cctp(role: ChainRole) {
  const c = manifest().cctp?.chains.find((x) => x.chainId === chainOf(role).chainId);
  assert.ok(c, `CCTP is deployed on the ${role} chain`);
  return c;
}

function client(role: ChainRole) {
  // A short polling interval: anvil mines instantly, and viem's 4 s default keeps the process alive.
  return createPublicClient({ transport: http(chainOf(role).rpcUrl), pollingInterval: 20 });
}

function wallet(role: ChainRole) {
  const chain = chainOf(role);
  return createWalletClient({
    account: faucet,
    chain: {
      id: chain.chainId,
      name: chain.name,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [chain.rpcUrl] } },
    },
    transport: http(chain.rpcUrl),
  });
}

async function mined(role: ChainRole, hash: Hex): Promise<TransactionReceipt> {
  const receipt = await client(role).waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  return receipt;
}

async function depositForBurn(p: { from: ChainRole; to: ChainRole; recipient: Address; maxFee: bigint; minFinalityThreshold: number }) {
  const source = cctp(p.from);
  await mined(
    p.from,
    await wallet(p.from).writeContract({ address: source.usdc, abi: erc20Abi, functionName: 'approve', args: [source.tokenMessenger, AMOUNT] }),
  );
  const hash = await wallet(p.from).writeContract({
    address: source.tokenMessenger,
    abi: tokenMessengerV2,
    functionName: 'depositForBurn',
    args: [AMOUNT, cctp(p.to).domain, pad(p.recipient), source.usdc, zeroHash, p.maxFee, p.minFinalityThreshold],
  });
  return mined(p.from, hash);
}

async function receiveMessage(role: ChainRole, message: Hex, attestation: Hex) {
  const hash = await wallet(role).writeContract({
    address: cctp(role).messageTransmitter,
    abi: messageTransmitterV2,
    functionName: 'receiveMessage',
    args: [message, attestation],
  });
  return mined(role, hash);
}

async function irisGet(path: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${irisUrl()}${path}`);
  return { status: res.status, body: await res.json() };
}

/** Polls GET /v2/messages until the transaction's message is complete; returns the first and the last answer. */
async function pollIris(role: ChainRole, txHash: Hex): Promise<{ first: IrisMessage; final: IrisMessage }> {
  const deadline = Date.now() + 10_000;
  let first: IrisMessage | undefined;
  for (;;) {
    const res = await irisGet(`/v2/messages/${cctp(role).domain}?transactionHash=${txHash}`);
    if (res.status === 200) {
      const [message] = (res.body as { messages: IrisMessage[] }).messages;
      assert.ok(message);
      first ??= message;
      if (message.status === 'complete') return { first, final: message };
    } else {
      assert.equal(res.status, 404, `unexpected Iris answer ${res.status}`);
    }
    assert.ok(Date.now() < deadline, 'Iris attested within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function eventOf<const abi extends Abi, name extends string>(receipt: TransactionReceipt, abi: abi, eventName: name) {
  for (const log of receipt.logs) {
    try {
      const decoded = decodeEventLog({ abi, data: log.data, topics: log.topics });
      if (decoded.eventName === eventName) return decoded.args as Record<string, unknown>;
    } catch {
      // Another contract's event.
    }
  }
  assert.fail(`no ${eventName} event in ${receipt.transactionHash}`);
}

async function usdcBalance(role: ChainRole, owner: Address): Promise<bigint> {
  return client(role).readContract({ address: cctp(role).usdc, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
}

async function usedNonce(role: ChainRole, nonce: Hex): Promise<bigint> {
  return client(role).readContract({ address: cctp(role).messageTransmitter, abi: messageTransmitterV2, functionName: 'usedNonces', args: [nonce] });
}

function freshAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address;
}

/** Function selectors and event topics of an ABI: equal iff names and parameter types are. */
function signatures(abi: Abi): string[] {
  return abi.flatMap((item) => {
    if (item.type === 'function') return [toFunctionSelector(item)];
    if (item.type === 'event') return [`${toEventSelector(item)}:${item.inputs.map((i) => Number(i.indexed ?? false)).join('')}`];
    return [];
  });
}
