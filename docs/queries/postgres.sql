-- The list engine's statements on PostgreSQL: every statement it builds for each request
-- below, on a fresh database (test/query/queries.test.ts says which data). Generated: do not edit;
-- npm run queries:generate (with TEST_DATABASE_URL set: it writes both dialects).

-- users, no filter: GET /users
-- users stamped
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "id" as "k0"
    from "users"
    where "users"."id" = any(array(select id
        from (select "users"."id" as "id"
          from "users"
          order by "id" asc
          limit $1 offset $2) as ids))) as page) as p on true
order by "p"."k0" asc;

-- users, a filter the summary answers, page 2: GET /users?status=active&sort=last_name:asc&page=2&size=5
-- users stamped
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "last_name_key" as "k0", "id" as "k1"
    from "users"
    where "users"."id" = any(array(select id
        from (select "users"."id" as "id"
          from "users"
          where "status" = $1
          order by "last_name_key" asc, "id" asc
          limit $2 offset $3) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- users, page 3 of the same list, after page 2: GET /users?status=active&sort=last_name:asc&page=3&size=5
-- users stamped-seek
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "last_name_key" as "k0", "id" as "k1"
    from "users"
    where "users"."id" = any(array(select id
        from (select arms.id
          from ((select "users"."id" as "id", "last_name_key" as "k0", "id" as "k1"
              from "users"
              where "status" = $1 and "last_name_key" = $2 and "id" > $3
              order by "id" asc
              limit $4)
            union all (select "users"."id" as "id", "last_name_key" as "k0", "id" as "k1"
              from "users"
              where "status" = $5 and "last_name_key" > $6
              order by "last_name_key" asc, "id" asc
              limit $7)) as arms
          order by "arms"."k0" asc, "arms"."k1" asc
          limit $8 offset $9) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- users, two countries by age: GET /users?lives_in=[brazil,chile]&sort=age:asc&page=2&size=5
-- users stamped-split:0
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "id" as "k0"
    from "users"
    where "users"."id" = any(array(select id
        from (select arms.id
          from ((select "users"."id" as "id", "id" as "k0"
              from "users"
              where "country_fold" = $1 and "age" = $2
              order by "id" asc
              limit $3)
            union all (select "users"."id" as "id", "id" as "k0"
              from "users"
              where "country_fold" = $4 and "age" = $5
              order by "id" asc
              limit $6)) as arms
          order by "arms"."k0" asc
          limit $7 offset $8) as ids))) as page) as p on true
order by "p"."k0" asc;

-- users, two countries by last name: GET /users?lives_in=[brazil,chile]&sort=last_name:asc&page=2&size=5
-- users stamped-split:0
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "last_name_key" as "k0", "id" as "k1"
    from "users"
    where "users"."id" = any(array(select id
        from (select arms.id
          from ((select "users"."id" as "id", "last_name_key" as "k0", "id" as "k1"
              from "users"
              where "country_fold" = $1
              order by "last_name_key" asc, "id" asc
              limit $2)
            union all (select "users"."id" as "id", "last_name_key" as "k0", "id" as "k1"
              from "users"
              where "country_fold" = $3
              order by "last_name_key" asc, "id" asc
              limit $4)) as arms
          order by "arms"."k0" asc, "arms"."k1" asc
          limit $5 offset $6) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- users, sorted by a column the summary counts by, then a name: GET /users?sort=status:asc,first_name:desc&page=2&size=5
-- users stamped
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "first_name_key" as "k0", "id" as "k1"
    from "users"
    where "users"."id" = any(array(select id
        from (select "users"."id" as "id"
          from "users"
          where "status" collate "binary" = $1
          order by "first_name_key" desc, "id" asc
          limit $2 offset $3) as ids))) as page) as p on true
order by "p"."k0" desc, "p"."k1" asc;

-- users, sorted by a name, then a column the summary counts by: GET /users?sort=first_name:asc,country:desc&page=2&size=5
-- users stamped-split:0
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "first_name_key" as "k0", "country_key" as "k1", "id" as "k2"
    from "users"
    where "users"."id" = any(array(select id
        from (select arms.id
          from ((select "users"."id" as "id", "first_name_key" as "k0", "country_key" as "k1", "id" as "k2"
              from "users"
              where "country_fold" = $1 and "country_key" = $2
              order by "first_name_key" asc, "country_key" desc, "id" asc
              limit $3)
            union all (select "users"."id" as "id", "first_name_key" as "k0", "country_key" as "k1", "id" as "k2"
              from "users"
              where "country_fold" = $4 and "country_key" = $5
              order by "first_name_key" asc, "country_key" desc, "id" asc
              limit $6)
            union all (select "users"."id" as "id", "first_name_key" as "k0", "country_key" as "k1", "id" as "k2"
              from "users"
              where "country_fold" = $7 and "country_key" = $8
              order by "first_name_key" asc, "country_key" desc, "id" asc
              limit $9)
            union all (select "users"."id" as "id", "first_name_key" as "k0", "country_key" as "k1", "id" as "k2"
              from "users"
              where "country_fold" = $10 and "country_key" = $11
              order by "first_name_key" asc, "country_key" desc, "id" asc
              limit $12)
            union all (select "users"."id" as "id", "first_name_key" as "k0", "country_key" as "k1", "id" as "k2"
              from "users"
              where "country_fold" = $13 and "country_key" = $14
              order by "first_name_key" asc, "country_key" desc, "id" asc
              limit $15)) as arms
          order by "arms"."k0" asc, "arms"."k1" desc, "arms"."k2" asc
          limit $16 offset $17) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" desc, "p"."k2" asc;

-- users, a page in the back half: GET /users?older_than=20&sort=age:desc&page=9&size=5
-- users stamped
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "id" as "k0"
    from "users"
    where "users"."id" = any(array(select id
        from (select "users"."id" as "id"
          from "users"
          where "age" = $1
          order by "id" desc
          limit $2 offset $3) as ids))) as page) as p on true
order by "p"."k0" desc;

-- users, past the end: GET /users?status=inactive&page=999&size=5
-- (no statement the earlier requests had not built)

-- users, a lone name prefix: GET /users?first_name_starts_with=an&sort=last_name:asc&page=2&size=2
-- users prefix-summed
select
      (select coalesce(sum(n), 0)
  from "users_name_counts"
  where field = 'first_name' and name >= $1 and name < $2) as total,
      (select coalesce(sum(n), 0)
  from "users_counts") as all_rows;

-- users stamped
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "last_name_key" as "k0", "id" as "k1"
    from "users"
    where "users"."id" = any(array(select id
        from (select "users"."id" as "id"
          from "users"
          where "first_name_key" >= $1 and "first_name_key" < $2
          order by "last_name_key" asc, "id" asc
          limit $3 offset $4) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- users, an exact name (no summary answers it): GET /users?first_name=Ana&sort=age:asc&page=2&size=1
-- users stamped
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "age" as "k0", "id" as "k1"
    from "users"
    where "users"."id" = any(array(select id
        from (select "users"."id" as "id"
          from "users"
          where "first_name_key" = $1
          order by "age" asc, "id" asc
          limit $2 offset $3) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- users count
select count(*) as "total", (select cast(sum(users) as text) || ';'
  from table_version_slots) as "stamp"
from "users"
where "first_name_key" = $1;

-- users, cursor pages: GET /users?sort=age:desc&after=&size=5
-- users cursor
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "age" as "k0", "id" as "k1"
    from "users"
    where "users"."id" = any(array(select id
        from (select "users"."id" as "id"
          from "users"
          order by "age" desc, "id" asc
          limit $1 offset $2) as ids))) as page) as p on true
order by "p"."k0" desc, "p"."k1" asc;

-- users, cursor pages, the next one: GET /users?sort=age:desc&after=WzcxLDMzXQ.TyVEguXPUDVtTc7R&size=5
-- users cursor-seek
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "age" as "k0", "id" as "k1"
    from "users"
    where "users"."id" = any(array(select id
        from (select arms.id
          from ((select "users"."id" as "id", "age" as "k0", "id" as "k1"
              from "users"
              where "age" = $1 and "id" > $2
              order by "id" asc
              limit $3)
            union all (select "users"."id" as "id", "age" as "k0", "id" as "k1"
              from "users"
              where "age" < $4
              order by "age" desc, "id" asc
              limit $5)) as arms
          order by "arms"."k0" desc, "arms"."k1" asc
          limit $6 offset $7) as ids))) as page) as p on true
order by "p"."k0" desc, "p"."k1" asc;

-- users alias: GET /users/young-brazilians?sort_by=country&order=desc&page=2&size=1
-- users stamped
select s."page_stamp", p.*
from (select (select cast(sum(users) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "first_name", "last_name", "email", "age", "status", "country", "id" as "k0"
    from "users"
    where "users"."id" = any(array(select id
        from (select "users"."id" as "id"
          from "users"
          where "age" > $1 and "age" < $2 and "status" = $3 and "country_fold" = $4 and "country_key" = $5
          order by "id" asc
          limit $6 offset $7) as ids))) as page) as p on true
order by "p"."k0" asc;

-- artists by name, page 2: GET /artists?sort=name:desc&page=2&size=5
-- artists stamped
select s."page_stamp", p.*
from (select (select cast(sum(artists) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "image", "name_key" as "k0", "id" as "k1"
    from "artists"
    where "artists"."id" = any(array(select id
        from (select "artists"."id" as "id"
          from "artists"
          order by "name_key" desc, "id" asc
          limit (select $1::int8) offset (select $2::int8)) as ids))) as page) as p on true
order by "p"."k0" desc, "p"."k1" asc;

-- artists count
select count(*) as "total", (select cast(sum(artists) as text) || ';'
  from table_version_slots) as "stamp"
from "artists";

-- artists, name prefix: GET /artists?name_starts_with=al&sort=name:asc&page=2&size=2
-- artists stamped
select s."page_stamp", p.*
from (select (select cast(sum(artists) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "image", "name_key" as "k0", "id" as "k1"
    from "artists"
    where "artists"."id" = any(array(select id
        from (select "artists"."id" as "id"
          from "artists"
          where "name_key" >= $1 and "name_key" < $2
          order by "name_key" asc, "id" asc
          limit (select $3::int8) offset (select $4::int8)) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- artists count
select count(*) as "total", (select cast(sum(artists) as text) || ';'
  from table_version_slots) as "stamp"
from "artists"
where "name_key" >= $1 and "name_key" < $2;

-- artists, full text: GET /artists?q=alpha&page=2&size=2
-- artists stamped
select s."page_stamp", p.*
from (select (select cast(sum(artists) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "image", "id" as "k0"
    from "artists"
    where "artists"."id" = any(array(select id
        from (select "artists"."id" as "id"
          from "artists"
          where to_tsvector('simple', replace(split_part("name_key", chr(1), 1), chr(2), '')) @@ to_tsquery('simple', $1)
          order by "id" asc
          limit (select $2::int8) offset (select $3::int8)) as ids))) as page) as p on true
order by "p"."k0" asc;

-- artists count
select count(*) as "total", (select cast(sum(artists) as text) || ';'
  from table_version_slots) as "stamp"
from "artists"
where to_tsvector('simple', replace(split_part("name_key", chr(1), 1), chr(2), '')) @@ to_tsquery('simple', $1);

-- artists, exact name: GET /artists?name=Alpha%201
-- artists stamped
select s."page_stamp", p.*
from (select (select cast(sum(artists) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "image", "id" as "k0"
    from "artists"
    where "artists"."id" = any(array(select id
        from (select "artists"."id" as "id"
          from "artists"
          where "name_key" = $1
          order by "id" asc
          limit (select $2::int8) offset (select $3::int8)) as ids))) as page) as p on true
order by "p"."k0" asc;

-- artists, cursor pages: GET /artists?sort=name:asc&after=&size=5
-- artists cursor
select s."page_stamp", p.*
from (select (select cast(sum(artists) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "image", "name_key" as "k0", "id" as "k1"
    from "artists"
    where "artists"."id" = any(array(select id
        from (select "artists"."id" as "id"
          from "artists"
          order by "name_key" asc, "id" asc
          limit (select $1::int8) offset (select $2::int8)) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- artists count
select count(*) as "total", (select cast(sum(artists) as text) || ';'
  from table_version_slots) as "stamp"
from "artists";

-- artists, cursor pages, the next one: GET /artists?sort=name:asc&after=WyJiZXRhXHUwMDAyIDFcdTAwMDFiZXRhIDEiLDJd.Ing1ylnHFkWR-zXe&size=5
-- artists cursor-seek
select s."page_stamp", p.*
from (select (select cast(sum(artists) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "image", "name_key" as "k0", "id" as "k1"
    from "artists"
    where "artists"."id" = any(array(select id
        from (select arms.id
          from ((select "artists"."id" as "id", "name_key" as "k0", "id" as "k1"
              from "artists"
              where "name_key" = $1 and "id" > $2
              order by "id" asc
              limit (select $3::int8))
            union all (select "artists"."id" as "id", "name_key" as "k0", "id" as "k1"
              from "artists"
              where "name_key" > $4
              order by "name_key" asc, "id" asc
              limit (select $5::int8))) as arms
          order by "arms"."k0" asc, "arms"."k1" asc
          limit (select $6::int8) offset (select $7::int8)) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- an artist's albums, year range: GET /artists/1/albums?released_after=1990&released_before=2025&sort=year:desc&page=2&size=2
-- albums-of-artist stamped
select s."page_stamp", p.*
from (select (select cast(sum(albums) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "year", "image", "year" as "k0", "id" as "k1"
    from "albums"
    where "artist_id" = $1 and "albums"."id" = any(array(select id
        from (select "albums"."id" as "id"
          from "albums"
          where "artist_id" = $2 and "year" > $3 and "year" < $4
          order by "year" desc, "id" asc
          limit (select $5::int8) offset (select $6::int8)) as ids))) as page) as p on true
order by "p"."k0" desc, "p"."k1" asc;

-- an album's songs, by time: GET /artists/1/albums/1/songs?sort=time:desc&page=2&size=2
-- songs-of-album stamped
select s."page_stamp", ((select count(*) as "n"
    from "songs"
    where "album_id" = $1)) as "page_total", p.*, par.*
from (select (select cast(sum(songs) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join ((select "name" as "parent_name", "year" as "parent_year", "image" as "parent_image"
    from "albums"
    where "id" = $2 and "artist_id" = $3)) as par on true
left
join lateral (select *
  from (select "id", "name", "time", "time" collate "binary" as "k0", "id" as "k1"
    from "songs"
    where "album_id" = $4 and "songs"."id" = any(array(select id
        from (select "songs"."id" as "id"
          from "songs"
          where "album_id" = $5
          order by "time" collate "binary" desc, "id" asc
          limit (select $6::int8) offset (select $7::int8)) as ids))) as page) as p on true
order by "p"."k0" desc, "p"."k1" asc;

-- an album's songs, longer than: GET /artists/1/albums/1/songs?longer_than=02:00&sort=name:asc
-- songs-of-album stamped
select s."page_stamp", ((select count(*) as "n"
    from "songs"
    where "album_id" = $1 and "time" > $2)) as "page_total", p.*, par.*
from (select (select cast(sum(songs) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join ((select "name" as "parent_name", "year" as "parent_year", "image" as "parent_image"
    from "albums"
    where "id" = $3 and "artist_id" = $4)) as par on true
left
join lateral (select *
  from (select "id", "name", "time", "name_key" as "k0", "id" as "k1"
    from "songs"
    where "album_id" = $5 and "songs"."id" = any(array(select id
        from (select "songs"."id" as "id"
          from "songs"
          where "album_id" = $6 and "time" > $7
          order by "name_key" asc, "id" asc
          limit (select $8::int8) offset (select $9::int8)) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;

-- tokens: GET /tokens?sort=id:desc&page=1&size=2
-- active-tokens stamped
select s."page_stamp", p.*
from (select (select cast(sum(tokens) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "scopes", "created_at", "expires_at", "id" as "k0"
    from "tokens"
    where "revoked_at" is null and ("expires_at" is null or "expires_at" > $1) and "tokens"."id" = any(array(select id
        from (select "tokens"."id" as "id"
          from "tokens"
          where "revoked_at" is null and ("expires_at" is null or "expires_at" > $2)
          order by "id" desc
          limit $3 offset $4) as ids))) as page) as p on true
order by "p"."k0" desc;

-- active-tokens count
select count(*) as "total", (select cast(sum(tokens) as text) || ';'
  from table_version_slots) as "stamp"
from "tokens"
where "revoked_at" is null and ("expires_at" is null or "expires_at" > $1);

-- aliases: GET /aliases?collection=users
-- aliases stamped
select s."page_stamp", p.*
from (select (select cast(sum(aliases) as text) || ';'
    from table_version_slots) as "page_stamp") as s
left
join lateral (select *
  from (select "id", "name", "collection", "query", "name" collate "binary" as "k0", "id" as "k1"
    from "aliases"
    where "aliases"."id" = any(array(select id
        from (select "aliases"."id" as "id"
          from "aliases"
          where "collection" = $1
          order by "name" collate "binary" asc, "id" asc
          limit $2 offset $3) as ids))) as page) as p on true
order by "p"."k0" asc, "p"."k1" asc;
