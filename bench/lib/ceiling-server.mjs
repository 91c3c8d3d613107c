// The ceiling: a bare node:http server answering, per method, the very bytes (status, headers, body)
// that the service sent for the scenario. Started as its own process: node ceiling-server.mjs file.json
import http from 'node:http';
import { readFileSync } from 'node:fs';

const captured = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const responses = {};
for (const [method, r] of Object.entries(captured)) {
  responses[method] = { status: r.status, headers: r.headers.flat(), body: Buffer.from(r.body, 'base64') };
}
const fallback = Object.values(responses)[0];

const server = http.createServer((req, res) => {
  const r = responses[req.method] ?? fallback;
  // A POST's body is read before answering, as any server must.
  req.resume();
  req.on('end', () => {
    res.writeHead(r.status, r.headers);
    res.end(r.body);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
