import { isIP } from 'node:net';

// Which IP addresses a webhook may connect to (unless WEBHOOK_ALLOW_PRIVATE=on): none of IANA's
// special-purpose blocks (the IPv4 and IPv6 Special-Purpose Address Registries, every entry whatever
// its "globally reachable" column says: a receiver has no business in any of them), no IPv4
// multicast, and no IPv6 outside global unicast (2000::/3: multicast, link-local, unique-local and
// everything IETF-reserved, which includes the IPv4-compatible ::a.b.c.d and ::ffff:0:a.b.c.d).
// IPv6 that carries an IPv4 address is unwrapped: an IPv4-mapped ::ffff:a.b.c.d is the IPv4 address
// it maps (a dual-stack socket connects to exactly that), judged as such; the translation prefixes
// (NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32) are refused whatever
// they embed, and the refusal names the IPv4 address inside, which is where the packets would go.

interface Block {
  /** The network address as a number (IPv4) or a bigint (IPv6). */
  net: bigint;
  prefix: number;
  text: string;
  name: string;
}

const IPV4_BLOCKS: readonly (readonly [string, string])[] = [
  ['0.0.0.0/8', '"this network"'],
  ['10.0.0.0/8', 'private-use'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata lives here)'],
  ['172.16.0.0/12', 'private-use'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'private-use'],
  ['192.175.48.0/24', 'direct delegation AS112 service'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
];

const IPV6_BLOCKS: readonly (readonly [string, string])[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['64:ff9b::/96', 'IPv4-IPv6 translation (NAT64)'],
  ['64:ff9b:1::/48', 'local-use IPv4-IPv6 translation (NAT64)'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy IPv6 prefix'],
  ['2001::/32', 'Teredo'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'direct delegation AS112 service'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'SRv6 SIDs'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
];

function ipv4Number(text: string): bigint {
  return text.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

/** The 128 bits of a valid IPv6 address (as net.isIP accepts it: compressed, dotted tail, zone). */
function ipv6Number(address: string): bigint {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = ipv4Number(tail);
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = groups(rest);
  const all = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function blocks(list: readonly (readonly [string, string])[], bits: number, parse: (t: string) => bigint): Block[] {
  return list.map(([text, name]) => {
    const [net, prefix] = text.split('/') as [string, string];
    const length = Number(prefix);
    const value = parse(net);
    if ((value & ((1n << BigInt(bits - length)) - 1n)) !== 0n) throw new Error(`${text}: host bits set`);
    return { net: value, prefix: length, text, name };
  });
}

const V4 = blocks(IPV4_BLOCKS, 32, ipv4Number);
const V6 = blocks(IPV6_BLOCKS, 128, ipv6Number);
const GLOBAL_UNICAST = { net: 0x2n << 124n, prefix: 3 };

const within = (value: bigint, bits: number, block: { net: bigint; prefix: number }) =>
  value >> BigInt(bits - block.prefix) === block.net >> BigInt(bits - block.prefix);

function ipv4Text(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join('.');
}

/** The IPv4 address an IPv6 address carries, by the rules of the prefix it is in (RFC 4291, 6052, 3056, 4380). */
function embeddedIpv4(value: bigint): string | undefined {
  const top = (bits: number) => value >> BigInt(128 - bits);
  const low32 = value & 0xffffffffn;
  if (top(96) === 0n || top(96) === 0xffffn || top(96) === 0xffff0000n) return ipv4Text(low32); // compatible, mapped, translated
  if (top(96) === 0x64ff9b0000000000000000n) return ipv4Text(low32); // NAT64 /96
  if (top(48) === 0x64ff9b0001n) {
    // NAT64 /48: the IPv4 address sits in bits 48..63 and 72..87 (bits 64..71 are the "u" octet).
    return ipv4Text((((value >> 64n) & 0xffffn) << 16n) | ((value >> 40n) & 0xffffn));
  }
  if (top(16) === 0x2002n) return ipv4Text((value >> 80n) & 0xffffffffn); // 6to4
  if (top(32) === 0x20010000n) return ipv4Text(low32 ^ 0xffffffffn); // Teredo: the client, obfuscated
  return undefined;
}

/** The most specific block holding `value` (255.255.255.255 rather than all of 240.0.0.0/4, Teredo rather than all of 2001::/23). */
function blockOf(blocks: readonly Block[], bits: number, value: bigint): Block | undefined {
  let found: Block | undefined;
  for (const b of blocks) if (within(value, bits, b) && (!found || b.prefix > found.prefix)) found = b;
  return found;
}

function refusedIpv4(value: bigint, shown: string): string | null {
  const block = blockOf(V4, 32, value);
  return block ? `${shown} is ${block.name} (${block.text})` : null;
}

/**
 * Why `address` (an IP literal) may not be connected to, or null when it may. Anything that is not an
 * IP address is refused: only addresses are judged here, names are resolved first.
 */
export function refusedAddress(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return refusedIpv4(ipv4Number(address), address);
  if (family !== 6) return `${address} is not an IP address`;
  const value = ipv6Number(address);
  if (value >> 32n === 0xffffn) {
    // IPv4-mapped: the socket talks IPv4 to the address it maps.
    return refusedIpv4(value & 0xffffffffn, `${address} (IPv4-mapped ${ipv4Text(value & 0xffffffffn)})`);
  }
  const inside = embeddedIpv4(value);
  const shown = inside ? `${address} (embedding ${inside})` : address;
  const block = blockOf(V6, 128, value);
  if (block) return `${shown} is ${block.name} (${block.text})`;
  if (!within(value, 128, GLOBAL_UNICAST)) return `${shown} is not global unicast (outside 2000::/3)`;
  return null;
}
