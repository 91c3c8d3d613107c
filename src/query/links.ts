import type { FastifyReply } from 'fastify';
import { encodePair } from './parse.js';
import type { ListPlan } from './sql.js';

// X-Total-Count and an RFC 8288 Link header (first, prev, next, last), each URL carrying the request's
// own filters and sort, and the pagination in the style the client used.

function pageParams(plan: ListPlan, offset: number): string {
  const { style, limit } = plan.request.page;
  if (style === 'limit') return `${encodePair('offset', String(offset))}&${encodePair('limit', String(limit))}`;
  return `${encodePair('page', String(Math.floor(offset / limit) + 1))}&${encodePair(style, String(limit))}`;
}

/** What a read of the page found: the total and, cursor style, the cursor of the next page (none on the last). */
export interface PageFound {
  total: number;
  next?: string;
}

export function linkHeader(path: string, plan: ListPlan, { total, next }: PageFound): string {
  const { offset, limit } = plan.request.page;
  // What every link of the answer starts with: the path and the request's own filters and sort.
  let head = `${path}?`;
  for (const p of plan.request.kept) head += `${encodePair(p.key, p.value)}&`;
  if (plan.request.page.style === 'cursor') {
    // A cursor walks forward only: first (after= empty) and, while rows follow, next.
    const size = encodePair('size', String(limit));
    const at = (cursor: string) => `${head}${encodePair('after', cursor)}&${size}`;
    const links = [`<${at('')}>; rel="first"`];
    if (next) links.push(`<${at(next)}>; rel="next"`);
    return links.join(', ');
  }
  const url = (at: number) => `${head}${pageParams(plan, at)}`;
  // The last page starts at a multiple of the page size; for offset paging, in step with the offset.
  const phase = offset % limit;
  const lastStart = total <= phase ? 0 : phase + Math.floor((total - phase - 1) / limit) * limit;
  const links: [string, number][] = [['first', 0]];
  if (offset > 0) links.push(['prev', Math.max(0, Math.min(offset - limit, lastStart))]);
  if (offset + limit < total) links.push(['next', offset + limit]);
  links.push(['last', lastStart]);
  return links.map(([rel, at]) => `<${url(at)}>; rel="${rel}"`).join(', ');
}

export function setListHeaders(reply: FastifyReply, path: string, plan: ListPlan, found: PageFound): void {
  reply.header('X-Total-Count', String(found.total));
  reply.header('Link', linkHeader(path, plan, found));
}
