import { type Address, type Hex, decodeAbiParameters, decodeFunctionData, erc20Abi, getAddress, parseTransaction, sliceHex } from 'viem';
import { messageTransmitterV2Abi, tokenMessengerV2Abi } from '../../providers/cctp/abi.ts';
import { entrypointAbi, poolAbi, relayDataParameters } from '../../providers/privacy-pools/abi.ts';

/**
 * What a transaction asks for, in the policy's words: the one call the service makes of each kind, with the
 * arguments a rule looks at. Anything else is `other` (and refused): the policy allows calls it can read, never the
 * rest. Pure: the table tests in test/unit/signer-policy.test.ts run it on serialized transactions.
 */
export type Call =
  | { kind: 'cancel' }
  | { kind: 'native'; to: Address; value: bigint }
  | { kind: 'transfer'; token: Address; to: Address; amount: bigint }
  | { kind: 'approve'; token: Address; spender: Address; amount: bigint }
  | { kind: 'burn'; messenger: Address; token: Address; amount: bigint; mintRecipient: Address; mintRecipientPadded: boolean; anyCaller: boolean }
  | { kind: 'mint'; transmitter: Address }
  | { kind: 'poolDeposit'; entrypoint: Address; asset: Address; amount: bigint; precommitment: bigint }
  | { kind: 'relay'; entrypoint: Address; processooor: Address; recipient: Address; feeRecipient: Address; nullifierHash: bigint }
  | { kind: 'ragequit'; pool: Address }
  | { kind: 'other'; to: Address | null; selector: Hex | null; value: bigint };

export interface ReadTransaction {
  chainId: number | undefined;
  from: Address;
  call: Call;
  /** The most the transaction can pay in fees: gas limit × the highest price per gas it offers. */
  maxFee: bigint;
}

const callAbi = [...erc20Abi, ...tokenMessengerV2Abi, ...messageTransmitterV2Abi, ...entrypointAbi, ...poolAbi];

/** Reads an unsigned serialized transaction as the account `from` would send it. */
export function readTransaction(unsigned: Hex, from: Address): ReadTransaction {
  const tx = parseTransaction(unsigned);
  const value = tx.value ?? 0n;
  const data = tx.data && tx.data !== '0x' ? tx.data : undefined;
  const to = tx.to ? getAddress(tx.to) : null;
  const maxFee = (tx.gas ?? 0n) * ((tx as { maxFeePerGas?: bigint }).maxFeePerGas ?? (tx as { gasPrice?: bigint }).gasPrice ?? 0n);
  // The service sends plain transactions only: a blob or a set-code (EIP-7702) transaction is never one of its calls.
  if (tx.type !== 'legacy' && tx.type !== 'eip2930' && tx.type !== 'eip1559') {
    return { chainId: tx.chainId, from, maxFee, call: { kind: 'other', to, selector: data && data.length >= 10 ? sliceHex(data, 0, 4) : null, value } };
  }
  return { chainId: tx.chainId, from, maxFee, call: callOf(to, data, value, from) };
}

function callOf(to: Address | null, data: Hex | undefined, value: bigint, from: Address): Call {
  if (!to) return { kind: 'other', to, selector: data ? sliceHex(data, 0, 4) : null, value };
  // A replacement that only burns the nonce: nothing to anyone.
  if (!data) return to === getAddress(from) && value === 0n ? { kind: 'cancel' } : { kind: 'native', to, value };
  const other: Call = { kind: 'other', to, selector: data.length >= 10 ? sliceHex(data, 0, 4) : null, value };
  if (value !== 0n) return other;
  let decoded: ReturnType<typeof decodeFunctionData<typeof callAbi>>;
  try {
    decoded = decodeFunctionData({ abi: callAbi, data });
  } catch {
    return other;
  }
  switch (decoded.functionName) {
    case 'transfer': {
      const [recipient, amount] = decoded.args as readonly [Address, bigint];
      return { kind: 'transfer', token: to, to: getAddress(recipient), amount };
    }
    case 'approve': {
      const [spender, amount] = decoded.args as readonly [Address, bigint];
      return { kind: 'approve', token: to, spender: getAddress(spender), amount };
    }
    case 'depositForBurn': {
      const [amount, , mintRecipient, burnToken, destinationCaller] = decoded.args as readonly [bigint, number, Hex, Address, Hex, bigint, number];
      return {
        kind: 'burn',
        messenger: to,
        token: getAddress(burnToken),
        amount,
        mintRecipient: getAddress(sliceHex(mintRecipient, 12)),
        // An EVM recipient is an address left-padded with zeros; anything else names an account the service cannot read.
        mintRecipientPadded: BigInt(sliceHex(mintRecipient, 0, 12)) === 0n,
        // Only "anyone may mint" (zero): a named caller could hold the mint hostage.
        anyCaller: BigInt(destinationCaller) === 0n,
      };
    }
    case 'receiveMessage':
      return { kind: 'mint', transmitter: to };
    case 'deposit': {
      const [asset, amount, precommitment] = decoded.args as readonly [Address, bigint, bigint];
      return { kind: 'poolDeposit', entrypoint: to, asset: getAddress(asset), amount, precommitment };
    }
    case 'relay': {
      const [withdrawal, proof] = decoded.args as readonly [{ processooor: Address; data: Hex }, { pubSignals: readonly bigint[] }, bigint];
      try {
        const [relayData] = decodeAbiParameters(relayDataParameters, withdrawal.data);
        return {
          kind: 'relay',
          entrypoint: to,
          processooor: getAddress(withdrawal.processooor),
          recipient: getAddress(relayData.recipient),
          feeRecipient: getAddress(relayData.feeRecipient),
          // The withdraw circuit's public signals: newCommitmentHash, existingNullifierHash, withdrawnValue, …
          nullifierHash: proof.pubSignals[1] ?? 0n,
        };
      } catch {
        return other;
      }
    }
    case 'ragequit':
      return { kind: 'ragequit', pool: to };
    default:
      return other;
  }
}
