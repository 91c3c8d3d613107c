// One request with its raw response: what the ceiling server replays.
import http from 'node:http';

// Hop-by-hop headers belong to each connection: node:http writes its own, as the service's server does.
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

export function capture(base, { method, path, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method, headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (!HOP.has(res.rawHeaders[i].toLowerCase())) raw.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
        }
        const buf = Buffer.concat(chunks);
        resolve({
          status: res.statusCode,
          headers: raw,
          body: buf.toString('base64'),
          text: buf.toString('utf8'),
          header: (n) => res.headers[n.toLowerCase()],
        });
      });
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`timeout: ${method} ${path}`)));
    req.end(body);
  });
}

export async function json(base, request) {
  const r = await capture(base, request);
  let parsed;
  try {
    parsed = JSON.parse(r.text);
  } catch {
    parsed = undefined;
  }
  return { ...r, json: parsed };
}
