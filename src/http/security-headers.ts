import helmet from 'helmet';

/**
 * The headers helmet's defaults set, computed once: helmet rebuilds its Content-Security-Policy text on
 * every response (a measurable share of a small GET), while the defaults never change. Shared by the
 * security plugin and by the answers written before Fastify routes a request (src/http/limits.ts).
 */
function helmetHeaders(): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string) => void (headers[name] = value),
    removeHeader: (name: string) => void delete headers[name],
  };
  helmet()({} as never, response as never, () => {});
  return Object.freeze(headers);
}

export const SECURITY_HEADERS = helmetHeaders();
