import { badRequest } from '../../errors/index.js';

// A token's expires_at as RFC 3339 writes a date-time (section 5.6), read to the instant it names.
// The body schema has already checked it as a `date-time` (Ajv: a real calendar day, hours, minutes,
// offsets in range, and a second 60 only where a leap second can fall: 23:59:60 in UTC). Ajv also
// takes forms RFC 3339 does not (`+05`, `+0530`, a tab between date and time), which the Date parser
// reads as nothing or guesses at; they are refused here, so no spelling reaches the database unread.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The latest instant kept: expires_at is stored as ISO text, whose order is time order up to year 9999 only. */
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const fail = (rule: string, text: string) => badRequest([{ field: 'expires_at', [rule]: text }], 'Request validation failed.');

/**
 * The instant `text` names, which must lie after `now` and no later than 9999-12-31T23:59:59.999Z.
 * A leap second (`23:59:60`) is read as `23:59:59` with its fraction: time as computers keep it has no
 * 61st second, and for an expiry the earlier reading is the safe one. Digits past the millisecond are
 * dropped (earlier again). `-00:00` is UTC.
 */
export function readExpiresAt(text: string, now: number): Date {
  const m = RFC3339.exec(text);
  if (!m) throw fail('format', 'Must be an RFC 3339 date-time with a time zone (Z or ±hh:mm), e.g. 2027-01-31T00:00:00Z.');
  const [, year, month, day, hour, minute, second, fraction = '', sign, offsetHours = '0', offsetMinutes = '0'] = m;
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  at.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  at.setUTCHours(Number(hour), Number(minute), Math.min(Number(second), 59), Number(fraction.slice(0, 3).padEnd(3, '0')));
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  const instant = at.getTime() - offset;
  if (instant <= now) throw fail('minimum', 'Must be in the future.');
  if (instant > LATEST) throw fail('maximum', 'Must be at most 9999-12-31T23:59:59Z in UTC.');
  return new Date(instant);
}
