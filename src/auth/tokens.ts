import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new opaque token: 256 random bits, URL-safe, with a prefix that makes leaked tokens greppable. */
export function generateToken(): string {
  return `mc_${randomBytes(32).toString('base64url')}`;
}

/** Tokens are stored and looked up only by this hash; the secret itself is never stored. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Extracts the token from `Authorization: Bearer <token>`; undefined when absent or malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer[ ]+([\x21-\x7e]{1,512})[ ]*$/i.exec(header);
  return match?.[1];
}
