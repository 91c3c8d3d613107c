// The ceiling: a bare node:http server answering, per method, the very bytes (status, headers, body)
// that the service sent for the scenario. Started as its own process: node ceiling-server.mjs file.json
import http from 'node:http';
import { readFileSync } from 'node:fs';

// A method may have a list of answers (the realistic mix: real answers of each kind, in the mix's
// proportions), given in turn whatever the URL.
const captured = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const responses = {};
for (const [method, given] of Object.entries(captured)) {
  const list = (Array.isArray(given) ? given : [given]).map((r) => ({ status: r.status, headers: r.headers.flat(), body: Buffer.from(r.body, 'base64') }));
  let i = 0;
  responses[method] = list.length === 1 ? () => list[0] : () => list[i++ % list.length];
}
const fallback = Object.values(responses)[0];

// Answers are written in batches: the requests read in one turn of the event loop are answered right
// after it (setImmediate), as the service's response cache does. On these machines that alone is worth
// about 60% more requests/s than answering each request as it is parsed (wrk gets its answers in
// bursts and the two processes switch less), so without it the service would beat its "ceiling".
let queued = [];
function answerQueued() {
  const batch = queued;
  queued = [];
  for (const { res, r } of batch) {
    res.writeHead(r.status, r.headers);
    res.end(r.body);
  }
}
const answer = (res, r) => {
  if (queued.push({ res, r }) === 1) setImmediate(answerQueued);
};

const server = http.createServer((req, res) => {
  const r = (responses[req.method] ?? fallback)();
  // A request without a body (the GETs) is answered at once; a POST's body is read first, as any
  // server must.
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return answer(res, r);
  req.resume();
  req.on('end', () => answer(res, r));
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
