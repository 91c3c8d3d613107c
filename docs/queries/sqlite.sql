-- The list engine's statements on SQLite: every statement it builds for each request
-- below, on a fresh database (test/query/queries.test.ts says which data). Generated: do not edit;
-- npm run queries:generate (with TEST_DATABASE_URL set: it writes both dialects).

-- users, no filter: GET /users
-- users page
select "id", "first_name", "last_name", "email", "age", "status", "country"
from "users" not indexed
order by "id" asc
limit ? offset ?;

-- users, a filter the summary answers, page 2: GET /users?status=active&sort=last_name:asc&page=2&size=5
-- users ids
select *
from (select "id" as "id", "last_name_key" as "k0", "id" as "k1"
  from "users" indexed by "users_last_name_asc"
  where "status" = ?
  order by "last_name_key" asc, "id" asc
  limit ? offset ?);

-- users by-ids
select "id", "first_name", "last_name", "email", "age", "status", "country"
from "users"
where "id" in (select value
  from json_each(?));

-- users, page 3 of the same list, after page 2: GET /users?status=active&sort=last_name:asc&page=3&size=5
-- users ids-seek
select *
from (select "id" as "id", "last_name_key" as "k0", "id" as "k1"
  from "users" indexed by "users_last_name_asc"
  where "status" = ? and "last_name_key" = ? and "id" > ?
  order by "id" asc
  limit ?)
union all
select *
from (select "id" as "id", "last_name_key" as "k0", "id" as "k1"
  from "users" indexed by "users_last_name_asc"
  where "status" = ? and "last_name_key" > ?
  order by "last_name_key" asc, "id" asc
  limit ?)
limit ? offset ?;

-- users, two countries by age: GET /users?lives_in=[brazil,chile]&sort=age:asc&page=2&size=5
-- users page
select "id", "first_name", "last_name", "email", "age", "status", "country"
from "users" indexed by "users_country_fold_asc"
where "country_fold" in (?, ?) and "age" = ?
order by "id" asc
limit ? offset ?;

-- users, two countries by last name: GET /users?lives_in=[brazil,chile]&sort=last_name:asc&page=2&size=5
-- users merged-ids:0
select *
from (select "id" as "id", "last_name_key" as "k0", "id" as "k1"
  from "users" indexed by "users_country_last_name_asc"
  where "country_fold" = ?)
union all
select *
from (select "id" as "id", "last_name_key" as "k0", "id" as "k1"
  from "users" indexed by "users_country_last_name_asc"
  where "country_fold" = ?)
order by "k0" asc, "k1" asc
limit ? offset ?;

-- users, sorted by a column the summary counts by, then a name: GET /users?sort=status:asc,first_name:desc&page=2&size=5
-- users ids
select *
from (select "id" as "id", "first_name_key" as "k0", "id" as "k1"
  from "users" indexed by "users_first_name_desc"
  where "status" collate "binary" = ?
  order by "first_name_key" desc, "id" asc
  limit ? offset ?);

-- users, sorted by a name, then a column the summary counts by: GET /users?sort=first_name:asc,country:desc&page=2&size=5
-- users group-split-ids:0
select *
from (select "id" as "id", "first_name_key" as "k0", 0 as "k1", "id" as "k2"
  from "users" indexed by "users_country_first_name_asc"
  where "country_fold" = ? and "country_key" = ?
  order by "first_name_key" asc, "id" asc
  limit ?)
union all
select *
from (select "id" as "id", "first_name_key" as "k0", 1 as "k1", "id" as "k2"
  from "users" indexed by "users_country_first_name_asc"
  where "country_fold" = ? and "country_key" = ?
  order by "first_name_key" asc, "id" asc
  limit ?)
union all
select *
from (select "id" as "id", "first_name_key" as "k0", 2 as "k1", "id" as "k2"
  from "users" indexed by "users_country_first_name_asc"
  where "country_fold" = ? and "country_key" = ?
  order by "first_name_key" asc, "id" asc
  limit ?)
union all
select *
from (select "id" as "id", "first_name_key" as "k0", 3 as "k1", "id" as "k2"
  from "users" indexed by "users_country_first_name_asc"
  where "country_fold" = ? and "country_key" = ?
  order by "first_name_key" asc, "id" asc
  limit ?)
union all
select *
from (select "id" as "id", "first_name_key" as "k0", 4 as "k1", "id" as "k2"
  from "users" indexed by "users_country_first_name_asc"
  where "country_fold" = ? and "country_key" = ?
  order by "first_name_key" asc, "id" asc
  limit ?)
order by "k0" asc, "k1", "k2"
limit ? offset ?;

-- users, a page in the back half: GET /users?older_than=20&sort=age:desc&page=9&size=5
-- users page
select "id", "first_name", "last_name", "email", "age", "status", "country"
from "users"
where "age" = ?
order by "id" desc
limit ? offset ?;

-- users page
select "id", "first_name", "last_name", "email", "age", "status", "country"
from "users" not indexed
where "age" = ?
order by "id" desc
limit ? offset ?;

-- users, past the end: GET /users?status=inactive&page=999&size=5
-- (no statement the earlier requests had not built)

-- users, a lone name prefix: GET /users?first_name_starts_with=an&sort=last_name:asc&page=2&size=2
-- users prefix-summed
select
      (select coalesce(sum(n), 0)
  from "users_name_counts"
  where field = 'first_name' and name >= ? and name < ?) as total,
      (select coalesce(sum(n), 0)
  from "users_counts") as all_rows;

-- users ids
select *
from (select "id" as "id", "last_name_key" as "k0", "id" as "k1"
  from "users" indexed by "users_last_name_asc"
  where "first_name_key" >= ? and "first_name_key" < ?
  order by "last_name_key" asc, "id" asc
  limit ? offset ?);

-- users, an exact name (no summary answers it): GET /users?first_name=Ana&sort=age:asc&page=2&size=1
-- users ids
select *
from (select "id" as "id", "age" as "k0", "id" as "k1"
  from "users"
  where "first_name_key" = ?
  order by "age" asc, "id" asc
  limit ? offset ?);

-- users count
select count(*) as "total", (select cast(version as text) || ';'
  from table_versions
  where name = 'users') as "stamp"
from "users"
where "first_name_key" = ?;

-- users, cursor pages: GET /users?sort=age:desc&after=&size=5
-- users cursor-ids
select *
from (select "id" as "id", "age" as "k0", "id" as "k1"
  from "users"
  order by "age" desc, "id" asc
  limit ? offset ?);

-- users, cursor pages, the next one: GET /users?sort=age:desc&after=WzcxLDMzXQ.TyVEguXPUDVtTc7R&size=5
-- users cursor-ids-seek
select *
from (select "id" as "id", "age" as "k0", "id" as "k1"
  from "users"
  where "age" = ? and "id" > ?
  order by "id" asc
  limit ?)
union all
select *
from (select "id" as "id", "age" as "k0", "id" as "k1"
  from "users"
  where "age" < ?
  order by "age" desc, "id" asc
  limit ?)
limit ? offset ?;

-- users alias: GET /users/young-brazilians?sort_by=country&order=desc&page=2&size=1
-- users ids
select *
from (select "id" as "id", "id" as "k0"
  from "users" indexed by "users_country_status_age"
  where "age" > ? and "age" < ? and "status" = ? and "country_fold" = ? and "country_key" = ?
  order by "id" asc
  limit ? offset ?);

-- artists by name, page 2: GET /artists?sort=name:desc&page=2&size=5
-- artists ids
select *
from (select "id" as "id", "name_key" as "k0", "id" as "k1"
  from "artists"
  order by "name_key" desc, "id" asc
  limit ? offset ?);

-- artists by-ids
select "id", "name", "image"
from "artists"
where "id" in (select value
  from json_each(?));

-- artists count
select count(*) as "total", (select cast(version as text) || ';'
  from table_versions
  where name = 'artists') as "stamp"
from "artists";

-- artists, name prefix: GET /artists?name_starts_with=al&sort=name:asc&page=2&size=2
-- artists ids
select *
from (select "id" as "id", "name_key" as "k0", "id" as "k1"
  from "artists"
  where "name_key" >= ? and "name_key" < ?
  order by "name_key" asc, "id" asc
  limit ? offset ?);

-- artists count
select count(*) as "total", (select cast(version as text) || ';'
  from table_versions
  where name = 'artists') as "stamp"
from "artists"
where "name_key" >= ? and "name_key" < ?;

-- artists, full text: GET /artists?q=alpha&page=2&size=2
-- artists ids
select *
from (select "id" as "id", "id" as "k0"
  from "artists"
  where "id" in (select rowid / 4
    from search_index
    where search_index match ? and rowid % 4 = 1)
  order by "id" asc
  limit ? offset ?);

-- artists count
select count(*) as "total", (select cast(version as text) || ';'
  from table_versions
  where name = 'artists') as "stamp"
from "artists"
where "id" in (select rowid / 4
  from search_index
  where search_index match ? and rowid % 4 = 1);

-- artists, exact name: GET /artists?name=Alpha%201
-- artists page
select "id", "name", "image"
from "artists"
where "name_key" = ?
order by "id" asc
limit ? offset ?;

-- artists, cursor pages: GET /artists?sort=name:asc&after=&size=5
-- artists cursor-ids
select *
from (select "id" as "id", "name_key" as "k0", "id" as "k1"
  from "artists"
  order by "name_key" asc, "id" asc
  limit ? offset ?);

-- artists count
select count(*) as "total", (select cast(version as text) || ';'
  from table_versions
  where name = 'artists') as "stamp"
from "artists";

-- artists, cursor pages, the next one: GET /artists?sort=name:asc&after=WyJiZXRhXHUwMDAyIDFcdTAwMDFiZXRhIDEiLDJd.Ing1ylnHFkWR-zXe&size=5
-- artists cursor-ids-seek
select *
from (select "id" as "id", "name_key" as "k0", "id" as "k1"
  from "artists"
  where "name_key" = ? and "id" > ?
  order by "id" asc
  limit ?)
union all
select *
from (select "id" as "id", "name_key" as "k0", "id" as "k1"
  from "artists"
  where "name_key" > ?
  order by "name_key" asc, "id" asc
  limit ?)
limit ? offset ?;

-- an artist's albums, year range: GET /artists/1/albums?released_after=1990&released_before=2025&sort=year:desc&page=2&size=2
-- albums-of-artist ids
select *
from (select "id" as "id", "year" as "k0", "id" as "k1"
  from "albums"
  where "artist_id" = ? and "year" > ? and "year" < ?
  order by "year" desc, "id" asc
  limit ? offset ?);

-- albums-of-artist by-ids
select "id", "name", "year", "image"
from "albums"
where "artist_id" = ? and "id" in (select value
  from json_each(?));

-- an album's songs, by time: GET /artists/1/albums/1/songs?sort=time:desc&page=2&size=2
-- songs-of-album ids
select *
from (select "id" as "id", "time" collate "binary" as "k0", "id" as "k1"
  from "songs"
  where "album_id" = ?
  order by "time" collate "binary" desc, "id" asc
  limit ? offset ?);

-- songs-of-album by-ids
select "id", "name", "time"
from "songs"
where "album_id" = ? and "id" in (select value
  from json_each(?));

-- songs-of-album count
select count(*) as "total", (select cast(version as text) || ';'
  from table_versions
  where name = 'songs') as "stamp"
from "songs"
where "album_id" = ?;

-- an album's songs, longer than: GET /artists/1/albums/1/songs?longer_than=02:00&sort=name:asc
-- songs-of-album page
select "id", "name", "time"
from "songs"
where "album_id" = ? and "time" > ?
order by "name_key" asc, "id" asc
limit ? offset ?;

-- tokens: GET /tokens?sort=id:desc&page=1&size=2
-- active-tokens page
select "id", "name", "scopes", "created_at", "expires_at"
from "tokens"
where "revoked_at" is null and ("expires_at" is null or "expires_at" > ?)
order by "id" desc
limit ? offset ?;

-- active-tokens count
select count(*) as "total", (select cast(version as text) || ';'
  from table_versions
  where name = 'tokens') as "stamp"
from "tokens"
where "revoked_at" is null and ("expires_at" is null or "expires_at" > ?);

-- aliases: GET /aliases?collection=users
-- aliases page
select "id", "name", "collection", "query"
from "aliases"
where "collection" = ?
order by "name" collate "binary" asc, "id" asc
limit ? offset ?;
