import { REQUIRED_TEXT, type ErrorDetail } from './codes.js';

// Ajv's errors, as the `details` of the standard body: one entry per failed rule, named by field.

export interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  /** Present with Ajv's `verbose`; carries our `x-error-message` for patterns. */
  parentSchema?: Record<string, unknown>;
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function fieldName(instancePath: string, part: string | undefined, extra?: string): string {
  const segments = instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) segments.push(extra);
  if (segments.length === 0) return PART_NAMES[part ?? 'body'] ?? 'body';
  return segments.join('.');
}

function ruleText(e: AjvError): [string, string] {
  const p = e.params;
  switch (e.keyword) {
    case 'type':
      return ['type', `Must be ${String(p.type).replace(',', ' or ')}.`];
    case 'format':
      return ['format', `Must be a valid ${p.format === 'uri' ? 'absolute URL' : String(p.format)}.`];
    case 'pattern':
      // `x-error-rule` names the rule when the pattern is how a wider rule is checked (GET /users/{id}).
      return [textOr(e.parentSchema?.['x-error-rule'], 'pattern'), textOr(e.parentSchema?.['x-error-message'], 'Does not match the required pattern.')];
    case 'minimum':
    case 'exclusiveMinimum':
      return ['minimum', `Must be ${e.keyword === 'minimum' ? 'at least' : 'greater than'} ${String(p.limit)}.`];
    case 'maximum':
    case 'exclusiveMaximum':
      return ['maximum', `Must be ${e.keyword === 'maximum' ? 'at most' : 'less than'} ${String(p.limit)}.`];
    case 'minLength':
      return ['minLength', `Must be at least ${characters(p.limit)}.`];
    case 'maxLength':
      return ['maxLength', `Must be at most ${characters(p.limit)}.`];
    case 'minItems':
      return ['minimum', `Must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}.`];
    case 'maxItems':
      return ['maximum', `Must have at most ${String(p.limit)} items.`];
    case 'enum':
      return ['enum', `Must be one of: ${(p.allowedValues as unknown[]).map(String).join(', ')}.`];
    case 'minProperties':
      return ['required', 'At least one field must be sent.'];
    default:
      return ['invalid', e.message ? `${e.message[0]?.toUpperCase()}${e.message.slice(1)}.` : 'Invalid value.'];
  }
}

/** Ajv errors (all of them) -> the `details` of the standard body. */
export function validationDetails(errors: AjvError[], part: string | undefined): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    let detail: ErrorDetail;
    if (e.keyword === 'required') {
      detail = { field: fieldName(e.instancePath, part, String(e.params.missingProperty)), required: REQUIRED_TEXT };
    } else if (e.keyword === 'additionalProperties') {
      const text = part === 'querystring' ? 'Unknown query parameter.' : 'Unknown field.';
      detail = { field: fieldName(e.instancePath, part, String(e.params.additionalProperty)), unknown: text };
    } else if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      continue; // the underlying errors are reported on their own
    } else {
      const [rule, text] = ruleText(e);
      detail = { field: fieldName(e.instancePath, part), [rule]: text };
    }
    const key = JSON.stringify(detail);
    if (!seen.has(key)) {
      seen.add(key);
      details.push(detail);
    }
  }
  return details;
}

/** A schema's own text (x-error-*), or the default when it has none. */
function textOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

function characters(limit: unknown): string {
  return limit === 1 ? '1 character' : `${String(limit)} characters`;
}
