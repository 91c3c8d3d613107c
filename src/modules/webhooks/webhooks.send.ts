import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { checkedLookup, refusedLiteral } from './webhooks.targets.js';

export interface Sent {
  status: number;
}

// Connections are kept alive between deliveries (a webhook's next POST follows at once under load),
// and a pool has no limit per receiver: a receiver that holds its connections open never makes
// another webhook's POST wait for a socket. Each socket was connected to an address the policy
// checked when it connected (the lookup below), and the policy is the process's own.
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/**
 * POSTs `body`; resolves with the receiver's status once its answer has been read, rejects on no
 * answer, or at once when the policy refuses the address (nothing is sent then).
 */
export function postJson(target: string, body: string, headers: Record<string, string>, timeoutMs: number, allowPrivate: boolean): Promise<Sent> {
  const url = new URL(target);
  const refused = refusedLiteral(url, allowPrivate);
  if (refused) return Promise.reject(new Error(refused));
  const https = url.protocol === 'https:';
  const request = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: https ? agents.https : agents.http,
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'music-catalogue-webhooks',
          ...headers,
        },
        lookup: checkedLookup(allowPrivate),
        timeout: timeoutMs,
      },
      (res) => {
        // The answer's body is not used; reading it to the end frees the connection.
        res.resume();
        res.once('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.once('error', reject);
      },
    );
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
    req.end(body);
  });
}
