import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeFunctionData, erc20Abi, zeroAddress, type Address } from 'viem';
import { nativeDelivered } from '../../activities/bridge.ts';
import { nativeUserFunds } from '../../activities/nativeFunds.ts';
import { isNativeToken, paymentCall } from '../../src/chain/erc20.ts';
import { movable } from '../../src/providers/relay/adapter.ts';

const RECIPIENT: Address = '0x000000000000000000000000000000000000bEEF';
const STRANGER: Address = '0x0000000000000000000000000000000000000B0b';
const USDC: Address = '0x5FbDB2315678afecb367f032d93F642f64180aa3';

describe('native currency (Relay mode)', () => {
  test('a native fill counts only value sent to the recipient itself', () => {
    const cases: Array<[string, { to: Address | null; value: bigint }, bigint]> = [
      ['value to the recipient', { to: RECIPIENT, value: 5n }, 5n],
      ['same address in lower case', { to: RECIPIENT.toLowerCase() as Address, value: 5n }, 5n],
      ['value to someone else', { to: STRANGER, value: 5n }, 0n],
      ['a contract creation', { to: null, value: 5n }, 0n],
      ['no value (an ERC-20 call to the recipient)', { to: RECIPIENT, value: 0n }, 0n],
    ];
    for (const [name, tx, expected] of cases) assert.equal(nativeDelivered(tx, RECIPIENT), expected, name);
  });

  test('an order is funded by value for the native currency, by transfer() for an ERC-20', () => {
    assert.deepEqual(paymentCall(zeroAddress, STRANGER, 7n), { to: STRANGER, value: 7n });
    const erc20 = paymentCall(USDC, STRANGER, 7n);
    assert.equal(erc20.to, USDC);
    assert.equal(erc20.value, undefined);
    assert.deepEqual(decodeFunctionData({ abi: erc20Abi, data: erc20.data! }).args, [STRANGER, 7n]);
  });

  test("the token list keeps ERC-20s and a chain's native currency when it is ETH", () => {
    const cases: Array<[string, Parameters<typeof movable>[0], boolean]> = [
      ['an ERC-20', { address: USDC, symbol: 'USDC', decimals: 6 }, true],
      ['WETH', { address: USDC, symbol: 'WETH', decimals: 18 }, true],
      ['native ETH (zero address)', { address: zeroAddress, symbol: 'ETH', decimals: 18, metadata: { isNative: true } }, true],
      ['native ETH (0xeeee…)', { address: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE', symbol: 'ETH', decimals: 18 }, true],
      ['native AVAX', { address: zeroAddress, symbol: 'AVAX', decimals: 18, metadata: { isNative: true } }, false],
      ['native POL', { address: zeroAddress, symbol: 'POL', decimals: 18 }, false],
    ];
    for (const [name, currency, expected] of cases) assert.equal(movable(currency), expected, name);
  });

  test("the user's ETH at a deposit address is its balance less what is left of the service's gas top-ups", () => {
    const cases: Array<[string, bigint, { topUps: bigint[]; fees: bigint[] }, bigint]> = [
      ['awaiting its deposit: all of it', 100n, { topUps: [], fees: [] }, 100n],
      ['after the bridge-in: the rest of the top-up is no stray', 30n, { topUps: [50n], fees: [20n] }, 0n],
      ['a stray after the bridge-in', 37n, { topUps: [50n], fees: [20n] }, 7n],
      ['two top-ups, two sends, then a stray', 112n, { topUps: [50n, 50n], fees: [20n, 30n] }, 62n],
      ['gas spent beyond the top-ups (fees paid from the deposit) never adds to it', 5n, { topUps: [10n], fees: [15n] }, 5n],
      ['less than the top-ups left: nothing', 3n, { topUps: [50n], fees: [20n] }, 0n],
    ];
    for (const [name, balance, moves, expected] of cases) assert.equal(nativeUserFunds(balance, moves), expected, name);
  });

  test('the zero address names the native currency, whatever its case', () => {
    assert.equal(isNativeToken(zeroAddress), true);
    assert.equal(isNativeToken(USDC), false);
  });
});
