/**
 * The admin token created on the first start of an empty database, printed once (only its hash is
 * stored). Messages for the operator go to stderr as plain text: stdout carries the JSON log stream
 * alone (log shippers parse it).
 */
export function printAdminToken(created: string | undefined): void {
  if (!created) return;
  process.stderr.write(
    `\nNo CATALOGUE_ADMIN_TOKEN set and no tokens exist: created an admin token (shown only now):\n\n  ${created}\n\n` +
      `Use it as: Authorization: Bearer ${created}\n\n`,
  );
}
