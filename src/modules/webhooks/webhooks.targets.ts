import { isIP, type LookupFunction } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { refusedAddress } from './webhooks.addresses.js';

// Outbound requests to addresses the caller names are a server-side request forgery risk: a webhook
// at http://127.0.0.1:5432 or http://169.254.169.254 (cloud metadata) would make the service probe
// its own network. Unless WEBHOOK_ALLOW_PRIVATE=on (read by the process that sends, at every
// delivery, not only at creation), the address a delivery connects to must be one
// webhooks.addresses.ts allows:
// - an IP literal is checked before the request is made (Node connects to a literal without any
//   lookup, so a lookup hook alone would never see it);
// - a name is resolved by our own lookup, which drops refused addresses and hands Node only the ones
//   it checked: Node connects to exactly those (no second lookup a rebinding DNS server could answer
//   differently).
// At creation the same rules refuse a literal (and localhost) early, with a 400.

const PRIVATE_HINT = 'WEBHOOK_ALLOW_PRIVATE is off';

/** The URL's host as an address when it is an IP literal (brackets of IPv6 removed), else undefined. */
export function literalHost(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 ? host : undefined;
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
  const host = url.hostname;
  if (host === 'localhost' || host.endsWith('.localhost') || host === 'localhost.' || host.endsWith('.localhost.')) {
    return 'Must be a public address: localhost is loopback (WEBHOOK_ALLOW_PRIVATE).';
  }
  const literal = literalHost(url);
  const refused = literal === undefined ? null : refusedAddress(literal);
  return refused && `Must be a public address: ${refused} (WEBHOOK_ALLOW_PRIVATE).`;
}

/** At delivery: why the URL's literal address may not be connected to, or null (a name, or allowed). */
export function refusedLiteral(url: URL, allowPrivate: boolean): string | null {
  const literal = allowPrivate ? undefined : literalHost(url);
  const refused = literal === undefined ? null : refusedAddress(literal);
  return refused && `refused to connect: ${refused} (${PRIVATE_HINT})`;
}

/** A lookup for http.request that hands Node only addresses the policy allows. */
export function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const usable = allowPrivate ? addresses : addresses.filter((a) => refusedAddress(a.address) === null);
      if (usable.length === 0) {
        const why = addresses.map((a) => refusedAddress(a.address)).join('; ');
        return callback(new Error(`refused to connect: ${hostname} resolves to no allowed address: ${why} (${PRIVATE_HINT})`), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
