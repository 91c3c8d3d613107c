import { BlockList, isIP } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';

// Outbound requests to addresses the caller names are a server-side request forgery risk: a webhook
// at http://127.0.0.1:5432 or http://169.254.169.254 (cloud metadata) would make the service probe
// its own network. Unless WEBHOOK_ALLOW_PRIVATE=on, a target is refused when its literal address is
// not public (at creation), and every delivery resolves the name itself and connects only to the
// address it checked (no second lookup a rebinding DNS server could answer differently).

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why a target URL is refused at creation, or null. */
export function refusedTarget(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'Must be an absolute http(s) URL.';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'Must be an http or https URL.';
  if (url.username || url.password) return 'Must not carry credentials; sign with the secret instead.';
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && isPrivateAddress(host))) {
    return 'Must be a public address: loopback, private and link-local targets are refused (WEBHOOK_ALLOW_PRIVATE).';
  }
  return null;
}

/** A lookup for http.request that refuses non-public addresses. */
export function publicOnlyLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const usable = allowPrivate ? addresses : addresses.filter((a) => !isPrivateAddress(a.address));
      if (usable.length === 0) return callback(new Error(`${hostname} resolves to no public address (WEBHOOK_ALLOW_PRIVATE is off)`), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
