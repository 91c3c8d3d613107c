import type { Migration } from 'kysely';
import * as catalogue from './20261122T0001_catalogue.js';
import * as binaryCollation from './20261122T0002_binary_collation.js';
import * as usersAliases from './20261122T0100_users_aliases.js';
import * as idempotency from './20261122T0200_idempotency.js';
import * as search from './20261122T0300_search.js';
import * as contentlessSearch from './20261123T0100_contentless_search.js';
import * as usersCountryIndex from './20261123T0200_users_country_index.js';
import * as countsAndTableVersions from './20261124T0100_counts_and_table_versions.js';
import * as usersOrderIndexes from './20261124T0200_users_order_indexes.js';
import * as idempotencyLease from './20261124T0600_idempotency_lease.js';
import * as tokenExpiry from './20261124T0610_token_expiry.js';
import * as namePrefixIndexes from './20261124T0700_name_prefix_indexes.js';
import * as artistsNameDescIndex from './20261124T0720_artists_name_desc_index.js';
import * as events from './20261124T0800_events.js';
import * as webhooks from './20261124T0810_webhooks.js';
import * as usersNameCounts from './20261124T0900_users_name_counts.js';
import * as usersCountryNameIndexes from './20261124T1000_users_country_name_indexes.js';
import * as usersNameIndexesOtherName from './20261124T1100_users_name_indexes_other_name.js';
import * as usersIndexesIncludeColumns from './20261124T1200_users_indexes_include_columns.js';
import * as collationKeys from './20261126T0100_collation_keys.js';
import * as webhookBatches from './20261126T0100_webhook_batches.js';
import * as eventsWithoutCounter from './20261126T0200_events_without_counter.js';
import * as versionsAndTotalsWithoutHotRows from './20261126T0300_versions_and_totals_without_hot_rows.js';
import * as idsWithinInt4 from './20261126T0400_ids_within_int4.js';
import * as usersIndexesWithoutStatusAge from './20261127T0100_users_indexes_without_status_age.js';
import * as eventsPublishBounded from './20261127T0200_events_publish_bounded.js';
import * as usersSqliteCountryStatusAge from './20261127T0340_users_sqlite_country_status_age.js';
import * as cheaperWrites from './20261127T1000_cheaper_writes.js';

// Every migration, by timestamped name. Names sort in the order they run; never rename or edit one
// that has shipped: add a new one.
export const migrations: Record<string, Migration> = {
  '20261122T0001_catalogue': catalogue,
  '20261122T0002_binary_collation': binaryCollation,
  '20261122T0100_users_aliases': usersAliases,
  '20261122T0200_idempotency': idempotency,
  '20261122T0300_search': search,
  '20261123T0100_contentless_search': contentlessSearch,
  '20261123T0200_users_country_index': usersCountryIndex,
  '20261124T0100_counts_and_table_versions': countsAndTableVersions,
  '20261124T0200_users_order_indexes': usersOrderIndexes,
  '20261124T0600_idempotency_lease': idempotencyLease,
  '20261124T0610_token_expiry': tokenExpiry,
  '20261124T0700_name_prefix_indexes': namePrefixIndexes,
  '20261124T0720_artists_name_desc_index': artistsNameDescIndex,
  '20261124T0800_events': events,
  '20261124T0810_webhooks': webhooks,
  '20261124T0900_users_name_counts': usersNameCounts,
  '20261124T1000_users_country_name_indexes': usersCountryNameIndexes,
  '20261124T1100_users_name_indexes_other_name': usersNameIndexesOtherName,
  '20261124T1200_users_indexes_include_columns': usersIndexesIncludeColumns,
  '20261126T0100_collation_keys': collationKeys,
  '20261126T0100_webhook_batches': webhookBatches,
  '20261126T0200_events_without_counter': eventsWithoutCounter,
  '20261126T0300_versions_and_totals_without_hot_rows': versionsAndTotalsWithoutHotRows,
  '20261126T0400_ids_within_int4': idsWithinInt4,
  '20261127T0100_users_indexes_without_status_age': usersIndexesWithoutStatusAge,
  '20261127T0200_events_publish_bounded': eventsPublishBounded,
  '20261127T0340_users_sqlite_country_status_age': usersSqliteCountryStatusAge,
  '20261127T1000_cheaper_writes': cheaperWrites,
};
