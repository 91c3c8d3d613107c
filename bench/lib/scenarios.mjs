// The scenarios of issue 7, each as the service's requests and json-server's equivalent ones.
// Requests are cycled in order by the load generator; a scenario with one request repeats it.

const USERS_QUERY = 'status=active&older_than=30&sort=age:desc,first_name:asc&size=20';
const PEER_USERS_QUERY = 'status=active&age_gt=30&_sort=-age,first_name&_per_page=20';
const SONG_BODY = JSON.stringify({ name: 'Benchmark song', time: '03:25' });

/**
 * ctx: { artistId, albumId, writeAlbumId, readPairs: [[artist, album]...], tokens: {read, write, admin},
 *        brazil (the stored spelling), connections }
 */
export function buildScenarios(ctx) {
  const auth = (scope) => ({ Authorization: `Bearer ${ctx.tokens[scope]}` });
  const get = (path, scope = 'read') => ({ method: 'GET', path, headers: auth(scope) });
  const postSong = (albumId) => ({
    method: 'POST',
    path: `/artists/${ctx.writeArtistId}/albums/${albumId}/songs`,
    headers: { ...auth('write'), 'Content-Type': 'application/json' },
    body: SONG_BODY,
  });
  const peerGet = (path) => ({ method: 'GET', path });
  const peerPostSong = (albumId) => ({
    method: 'POST',
    path: '/songs',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Benchmark song', time: '03:25', albumId: String(albumId) }),
  });

  // 90/10: nine reads (artists and album songs, spread over several artists) for each write.
  const mix = [];
  const peerMix = [];
  ctx.readPairs.forEach(([artist, album], i) => {
    if (i % 2 === 0) {
      mix.push(get(`/artists/${artist}`));
      peerMix.push(peerGet(`/artists/${artist}`));
    } else {
      mix.push(get(`/artists/${artist}/albums/${album}/songs`));
      peerMix.push(peerGet(`/albums/${album}?_embed=songs`));
    }
    if (i % 9 === 8) {
      mix.push(postSong(ctx.writeAlbumId));
      peerMix.push(peerPostSong(ctx.writeAlbumId));
    }
  });

  const c = ctx.connections;
  return [
    { id: 'get-artist', title: 'GET an artist', connections: c, requests: [get(`/artists/${ctx.artistId}`)], peer: [peerGet(`/artists/${ctx.artistId}`)] },
    {
      id: 'get-songs',
      title: 'GET the songs of an album',
      connections: c,
      requests: [get(`/artists/${ctx.artistId}/albums/${ctx.albumId}/songs`)],
      peer: [peerGet(`/albums/${ctx.albumId}?_embed=songs`)],
    },
    {
      id: 'users-p50',
      title: 'Users list, page 50',
      users: true,
      connections: c,
      requests: [get(`/users?${USERS_QUERY}&page=50`, 'admin')],
      peer: [peerGet(`/users?${PEER_USERS_QUERY}&_page=50`)],
    },
    {
      id: 'users-p4000',
      title: 'Users list, page 4000',
      users: true,
      connections: c,
      requests: [get(`/users?${USERS_QUERY}&page=4000`, 'admin')],
      peer: [peerGet(`/users?${PEER_USERS_QUERY}&_page=4000`)],
    },
    {
      id: 'users-p4000-c1',
      title: 'Users list, page 4000, 1 connection',
      users: true,
      connections: 1,
      requests: [get(`/users?${USERS_QUERY}&page=4000`, 'admin')],
      peer: [peerGet(`/users?${PEER_USERS_QUERY}&_page=4000`)],
    },
    {
      id: 'young-brazilians',
      title: 'Alias young-brazilians, page 1',
      users: true,
      connections: c,
      requests: [get('/users/young-brazilians', 'admin')],
      peer: [peerGet(`/users?status=active&country=${encodeURIComponent(ctx.brazil)}&age_gt=18&age_lt=35&_page=1&_per_page=20`)],
    },
    { id: 'post-song', title: 'POST a song', connections: c, requests: [postSong(ctx.writeAlbumId)], peer: [peerPostSong(ctx.writeAlbumId)] },
    { id: 'mix-90-10', title: '90/10 read/write mix', connections: c, requests: mix, peer: peerMix },
  ];
}
