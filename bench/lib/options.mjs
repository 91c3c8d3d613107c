// Command-line options of `npm run bench`. Defaults are the full dataset; --quick scales down.
import { DEFAULT_MIX_COUNT, DEFAULT_MIX_SEED, MIN_MIX_COUNT, MIX_IDS } from './mix.mjs';
import { WRITES_ID, WRITES_IDS } from './writes.mjs';

const FULL = { users: 1_000_000, artists: 10_000, duration: 8, rounds: 2, mixProbes: 200 };
const QUICK = { users: 100_000, artists: 1_000, duration: 3, rounds: 1, mixProbes: 100 };

export const USAGE = `Usage: npm run bench -- [options]

  --quick                 100k users, 1,000 artists, 3 s per measurement, 1 round
  --users N               users to seed (default 1,000,000)
  --artists N             artists to seed (default 10,000)
  --albums-per-artist N   (default 10)
  --songs-per-album N     (default 10)
  --seed S                seed of the deterministic dataset (default 42)
  --duration S            seconds per measurement (default 8)
  --rounds N              rounds of (ceiling, service, peer); the best round is reported (default 2)
  --connections N         connections for the concurrent scenarios (default 32)
  --only a,b              run only these scenarios (ids as printed); "mix" stands for every part of the
                          realistic mix: ${MIX_IDS.join(', ')}; "webhook" is one webhook's deliveries
                          against sustained song POSTs; "${WRITES_ID}" stands for writes only (user PATCHes
                          and artist POSTs) at each connection count: ${WRITES_IDS.join(', ')}
  --mix-requests N        distinct reads of the realistic mix (default ${DEFAULT_MIX_COUNT.toLocaleString('en-US')}, at least ${MIN_MIX_COUNT.toLocaleString('en-US')})
  --mix-seed S            seed of the realistic mix's generator (default ${DEFAULT_MIX_SEED})
  --mix-probes N          distinct requests per kind for the one-at-a-time latency (default 200, --quick 100)
  --workers N|auto        the service's WORKERS (default auto: one per core; 1 for a single process)
  --postgres URL          also measure the service on this PostgreSQL database (seeded if needed)
  --no-peer               skip json-server
  --tool wrk|autocannon   load generator (default: wrk, installed if missing; autocannon as fallback)
  --record                also write the report to bench/RESULTS.md (the committed figures)
  --profile               instead of the table: CPU-profile the service under GET an artist, the users list and
                          POST a song (or the --only scenarios); with --postgres, the service on PostgreSQL
`;

function intArg(name, raw) {
  if (!/^\d+$/.test(raw ?? '')) throw new Error(`${name} needs a non-negative integer, got "${raw}"`);
  return Number(raw);
}

export function parseOptions(argv) {
  const quick = argv.includes('--quick');
  const base = quick ? QUICK : FULL;
  const o = {
    quick,
    users: base.users,
    artists: base.artists,
    albumsPerArtist: 10,
    songsPerAlbum: 10,
    seed: 42,
    duration: base.duration,
    rounds: base.rounds,
    connections: 32,
    only: null,
    mixRequests: DEFAULT_MIX_COUNT,
    mixSeed: DEFAULT_MIX_SEED,
    mixProbes: base.mixProbes,
    postgres: null,
    workers: 'auto',
    peer: true,
    tool: null,
    profile: false,
    record: false,
    help: false,
    // json-server holds everything in one JSON file: it gets 100k users and the first 1,000 artists' catalogue.
    peerUsers: 100_000,
    peerArtists: 1_000,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => argv[++i];
    switch (a) {
      case '--quick':
        break;
      case '--help':
      case '-h':
        o.help = true;
        break;
      case '--users':
        o.users = intArg(a, next());
        break;
      case '--artists':
        o.artists = intArg(a, next());
        break;
      case '--albums-per-artist':
        o.albumsPerArtist = intArg(a, next());
        break;
      case '--songs-per-album':
        o.songsPerAlbum = intArg(a, next());
        break;
      case '--seed':
        o.seed = intArg(a, next());
        break;
      case '--duration':
        o.duration = intArg(a, next());
        break;
      case '--rounds':
        o.rounds = Math.max(1, intArg(a, next()));
        break;
      case '--connections':
        o.connections = Math.max(1, intArg(a, next()));
        break;
      case '--only':
        o.only = String(next() ?? '')
          .split(',')
          .filter(Boolean)
          .flatMap((id) => (id === 'mix' ? MIX_IDS : id === WRITES_ID ? WRITES_IDS : [id]));
        break;
      case '--mix-requests':
        o.mixRequests = intArg(a, next());
        break;
      case '--mix-seed':
        o.mixSeed = intArg(a, next());
        break;
      case '--mix-probes':
        o.mixProbes = Math.max(1, intArg(a, next()));
        break;
      case '--postgres':
        o.postgres = next();
        break;
      case '--workers':
        o.workers = String(next() ?? 'auto');
        break;
      case '--no-peer':
        o.peer = false;
        break;
      case '--tool':
        o.tool = next();
        break;
      case '--profile':
        o.profile = true;
        break;
      case '--record':
        o.record = true;
        break;
      default:
        throw new Error(`unknown option "${a}"\n\n${USAGE}`);
    }
  }
  if (o.tool && !['wrk', 'autocannon'].includes(o.tool)) throw new Error('--tool is wrk or autocannon');
  if (o.postgres && !/^postgres(ql)?:\/\//.test(o.postgres)) throw new Error('--postgres needs a postgres:// URL');
  if (o.mixRequests < MIN_MIX_COUNT) throw new Error(`--mix-requests must be at least ${MIN_MIX_COUNT}: the mix is of distinct requests`);
  if (o.albumsPerArtist < 2) throw new Error('--albums-per-artist must be at least 2 (one album takes the writes)');
  o.peerUsers = Math.min(o.peerUsers, o.users);
  o.peerArtists = Math.min(o.peerArtists, o.artists);
  return o;
}
