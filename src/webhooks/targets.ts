/**
 * The SSRF guard of webhook deliveries: a client chooses the URL, so without it the worker could be made to
 * POST into the service's own network (Postgres, Temporal, the signer, cloud metadata at 169.254.169.254).
 * The check runs in the socket's own DNS lookup, so the address connected to is the address checked (a
 * host that resolves to a public address once and a private one the next time gains nothing).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** Whether `ip` is a private, loopback, link-local or otherwise non-public address (IPv4-mapped IPv6 included). */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped) return blocked.check(mapped, 'ipv4');
  // NAT64 (64:ff9b::/96) and the other IPv4-embedding prefixes are refused outright: they can reach any IPv4 address.
  if (/^(64:ff9b:|2002:)/i.test(ip)) return true;
  return blocked.check(ip, 'ipv6');
}

export const PRIVATE_TARGET_MESSAGE = 'the webhook host resolves to a private, loopback or link-local address';

/** Raised by the guarded lookup; the delivery records it as a refused target (no retry). */
export class PrivateTargetError extends Error {
  override name = 'PrivateTargetError';
  readonly code = 'EPRIVATETARGET';
}

/** A DNS lookup for http.request that fails when any address of the host is private (unless `allowPrivate`). */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) {
        return callback(new PrivateTargetError(PRIVATE_TARGET_MESSAGE));
      }
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }));
      callback(null, first.address, first.family);
    });
  }) as LookupFunction;
}
