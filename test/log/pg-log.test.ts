import { describe, expect, it } from 'vitest';
import { checkLogIntegrity } from '../../src/log/integrity.js';
import { DatabaseUnavailableError, openPgLog } from '../../src/log/pg/pg-log.js';
import { runEventLogContract } from '../contract/event-log.contract.js';
import { freePort, usePostgres } from '../helpers/postgres.js';

const cluster = usePostgres();

runEventLogContract('postgres', async (clock) => openPgLog(await cluster().createDatabase(), { clock, scope: 'node-a' }));

describe('postgres log', () => {
  it('passes the integrity check through the public API', async () => {
    const log = await openPgLog(await cluster().createDatabase());
    await Promise.all(Array.from({ length: 30 }, (_, i) => log.append(`s${i % 4}`, [{ type: 't', data: i }])));
    expect(await checkLogIntegrity(log)).toEqual({ ok: true, records: 30, problems: [] });
    await log.close();
  });
});
