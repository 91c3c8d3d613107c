import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { publicOnlyLookup } from './webhooks.targets.js';

export interface Sent {
  status: number;
}

/** POSTs `body`; resolves with the receiver's status once its answer has been read, rejects on no answer. */
export function postJson(target: string, body: string, headers: Record<string, string>, timeoutMs: number, allowPrivate: boolean): Promise<Sent> {
  const url = new URL(target);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'user-agent': 'music-catalogue-webhooks',
          ...headers,
        },
        lookup: publicOnlyLookup(allowPrivate),
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
