import { encodeFunctionData, erc20Abi, parseEventLogs, type Address, type LocalAccount } from 'viem';
import type { ChainClients } from '../../chain/clients.ts';
import type { TxSender } from '../../chain/txSender.ts';
import { devnetPrivacyPoolAbi } from '../../devnet/artifacts/DevnetPrivacyPool.ts';
import type { PrivacyPool } from './types.ts';

/**
 * Adapter for the devnet privacy pool contract (contracts/DevnetPrivacyPool.sol): a stand-in with
 * Railgun's fee model where notes are commitments and only the pool operator (the TEE) can unshield.
 */
export function createDevnetPrivacyPool(opts: {
  chainId: number;
  address: Address;
  operator: LocalAccount;
  clients: ChainClients;
  sender: TxSender;
}): PrivacyPool {
  const { chainId, address, operator, clients, sender } = opts;
  const client = () => clients.publicClient(chainId);
  const read = <T>(functionName: 'shieldFeeBps' | 'unshieldFeeBps') =>
    client().readContract({ address, abi: devnetPrivacyPoolAbi, functionName }) as Promise<T>;

  return {
    chainId,
    address,

    async note(commitment) {
      const [, value, spent] = await client().readContract({ address, abi: devnetPrivacyPoolAbi, functionName: 'notes', args: [commitment] });
      return spent ? 0n : value;
    },

    async fees() {
      const [shieldFeeBps, unshieldFeeBps] = await Promise.all([read<number>('shieldFeeBps'), read<number>('unshieldFeeBps')]);
      return { shieldFeeBps: Number(shieldFeeBps), unshieldFeeBps: Number(unshieldFeeBps) };
    },

    async shield({ routeId, owner, token, amount, commitment }) {
      await sender.send({
        routeId,
        step: 'shield:approve',
        chainId,
        account: owner,
        to: token,
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [address, amount] }),
      });
      const { txHash, receipt } = await sender.send({
        routeId,
        step: 'shield',
        chainId,
        account: owner,
        to: address,
        data: encodeFunctionData({ abi: devnetPrivacyPoolAbi, functionName: 'shield', args: [token, amount, commitment] }),
      });
      const [event] = parseEventLogs({ abi: devnetPrivacyPoolAbi, eventName: 'Shielded', logs: receipt.logs });
      if (!event) throw new Error(`shield transaction ${txHash} emitted no Shielded event`);
      return { txHash, noteValue: event.args.value };
    },

    async unshield({ routeId, commitment, to }) {
      const { txHash, receipt } = await sender.send({
        routeId,
        step: 'unshield',
        chainId,
        account: operator,
        to: address,
        data: encodeFunctionData({ abi: devnetPrivacyPoolAbi, functionName: 'unshield', args: [commitment, to] }),
      });
      const [event] = parseEventLogs({ abi: devnetPrivacyPoolAbi, eventName: 'Unshielded', logs: receipt.logs });
      if (!event) throw new Error(`unshield transaction ${txHash} emitted no Unshielded event`);
      return { txHash, amount: event.args.amount };
    },
  };
}
