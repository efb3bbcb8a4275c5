import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { getAddress, toHex, type Address, type Hex } from 'viem';
import { english, generateMnemonic, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import type { FaultOperation } from '../faults.ts';

/** Relay intent statuses the emulator produces (docs: get-intents-status-v3). */
export type RelayStatus = 'waiting' | 'pending' | 'delayed' | 'submitted' | 'success' | 'refund' | 'failure';

/** A token transfer the solver owes, signed before it is broadcast so a restart can never send it twice. */
export interface Payout {
  chainId: number;
  token: Address;
  to: Address;
  amount: bigint;
  rawTx: Hex;
  txHash: Hex;
}

export interface Order {
  requestId: Hex;
  depositAddress: Address;
  depositIndex: number;
  user: Address;
  recipient: Address;
  refundTo: Address;
  tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT';
  operation: FaultOperation | null;
  originChainId: number;
  originCurrency: Address;
  amountIn: bigint;
  destinationChainId: number;
  destinationCurrency: Address;
  amountOut: bigint;
  /** Deposit-address balance when the quote was made: only what arrives on top of it counts. */
  baselineBalance: bigint;
  /** Origin block at quote time, where the search for the deposit transfer starts. */
  fromBlock: bigint;
  status: RelayStatus;
  details?: string;
  inTxHashes: Hex[];
  txHashes: Hex[];
  /** Decided when the deposit is seen: pay the recipient, or give the deposit back. */
  action?: 'fill' | 'refund';
  /** Epoch ms before which the payout must not be sent (delay fault). */
  notBefore?: number;
  payout?: Payout;
  payoutErrors: number;
  createdAt: number;
  updatedAt: number;
}

const bigintString = z.string().regex(/^\d+$/).transform(BigInt);
const address = z.string().transform((a) => getAddress(a));
const hex = z
  .string()
  .regex(/^0x[0-9a-fA-F]*$/)
  .transform((h) => h as Hex);

const orderSchema = z.object({
  requestId: hex,
  depositAddress: address,
  depositIndex: z.number().int().nonnegative(),
  user: address,
  recipient: address,
  refundTo: address,
  tradeType: z.enum(['EXACT_INPUT', 'EXACT_OUTPUT']),
  operation: z.enum(['bridge-in', 'bridge-out']).nullable(),
  originChainId: z.number().int(),
  originCurrency: address,
  amountIn: bigintString,
  destinationChainId: z.number().int(),
  destinationCurrency: address,
  amountOut: bigintString,
  baselineBalance: bigintString,
  fromBlock: bigintString,
  status: z.enum(['waiting', 'pending', 'delayed', 'submitted', 'success', 'refund', 'failure']),
  details: z.string().optional(),
  inTxHashes: z.array(hex),
  txHashes: z.array(hex),
  action: z.enum(['fill', 'refund']).optional(),
  notBefore: z.number().optional(),
  payout: z.object({ chainId: z.number().int(), token: address, to: address, amount: bigintString, rawTx: hex, txHash: hex }).optional(),
  payoutErrors: z.number().int().nonnegative(),
  createdAt: z.number(),
  updatedAt: z.number(),
});

const stateSchema = z.object({
  version: z.literal(1),
  /** Only present when the emulator generated the mnemonic itself. */
  depositMnemonic: z.string().optional(),
  nextDepositIndex: z.number().int().nonnegative(),
  orders: z.array(orderSchema),
});

export interface OrderStore {
  /** The next unused HD-derived deposit address. */
  allocateDepositAddress(): { address: Address; index: number };
  add(order: Order): void;
  get(requestId: string): Order | undefined;
  list(): Order[];
  update(requestId: Hex, patch: Partial<Order>): Order;
}

/**
 * Orders live in memory and, with a statePath, in a JSON file rewritten (atomically) on every
 * change, so a restarted emulator keeps its orders and never reuses a deposit address.
 */
export function openOrderStore(opts: { statePath?: string; depositMnemonic?: string }): OrderStore {
  const saved = opts.statePath && existsSync(opts.statePath) ? loadState(opts.statePath) : undefined;
  // Without a given mnemonic each fresh emulator gets its own, so two emulators on the same
  // chains never hand out the same deposit address.
  const generated = opts.depositMnemonic ? undefined : (saved?.depositMnemonic ?? generateMnemonic(english));
  const mnemonic = opts.depositMnemonic ?? generated!;
  // Deposit address i is m/44'/60'/0'/0/i. The parent key is derived once: going through
  // mnemonicToAccount for every address would redo the slow seed derivation each time.
  const parentKey = mnemonicToAccount(mnemonic, { path: "m/44'/60'/0'/0" }).getHdKey();
  const depositAddressAt = (index: number) => privateKeyToAccount(toHex(parentKey.deriveChild(index).privateKey!)).address;
  const orders = new Map<string, Order>((saved?.orders ?? []).map((o) => [o.requestId.toLowerCase(), o]));
  let nextDepositIndex = saved?.nextDepositIndex ?? 0;

  const persist = () => {
    if (!opts.statePath) return;
    const state = { version: 1, depositMnemonic: generated, nextDepositIndex, orders: [...orders.values()] };
    const tmp = `${opts.statePath}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(state, (_k, v) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
    renameSync(tmp, opts.statePath);
  };
  persist();

  return {
    allocateDepositAddress() {
      const index = nextDepositIndex++;
      persist();
      return { address: depositAddressAt(index), index };
    },
    add(order) {
      orders.set(order.requestId.toLowerCase(), order);
      persist();
    },
    get(requestId) {
      return orders.get(requestId.toLowerCase());
    },
    list() {
      return [...orders.values()];
    },
    update(requestId, patch) {
      const current = orders.get(requestId.toLowerCase());
      if (!current) throw new Error(`unknown order ${requestId}`);
      const next = { ...current, ...patch, updatedAt: Date.now() };
      orders.set(requestId.toLowerCase(), next);
      persist();
      return next;
    },
  };
}

function loadState(path: string): z.infer<typeof stateSchema> {
  const parsed = stateSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`relay emulator state ${path} is invalid: ${parsed.error.message}`);
  return parsed.data;
}
