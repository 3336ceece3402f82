/**
 * System routes (docs/api-reference.md "Logs, observability and updates", "Auth classes"): `POST /setup-observability` writes the platform keys into `./.env`;
 * `GET /updates` checks the server's own packages against the registry; `POST /updates` and
 * `POST /updates/:packageName` install latest versions. The writers are auth class `host-changing`: public for JWT,
 * behind the console guard in production (the auth layer applies it from the class).
 */
import { z } from 'zod';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { RouteDef, RequestContext } from '../contract/routes.js';
import { writeEnvValues } from './env-file.js';
import { checkUpdates, installLatest, isValidPackageName, trackedPackages, type UpdateReport, type UpdatesOptions } from './updates.js';

export interface SystemRouteDeps {
  /** the dotenv file POST /setup-observability writes */
  envFile: string;
  updates: UpdatesOptions;
  logger: Logger;
}

const SETUP_MESSAGE = 'Observability configured successfully. Please restart your application.';
const INSTALLED = 'Updates installed successfully';

const updateSchema = z.object({
  name: z.string(),
  installed: z.string(),
  latest: z.string().nullable(),
  type: z.enum(['major', 'minor', 'patch', 'latest', 'unknown']),
  packageJson: z.enum(['dependencies', 'devDependencies']),
  reason: z.string().optional(),
});

/** One warning naming the registry and why each unknown package stayed unknown (no error object to dump). */
function warnUnknown(log: Logger, report: UpdateReport, what: string): void {
  const unknown = report.updates.filter((u) => u.type === 'unknown').map((u) => ({ name: u.name, reason: u.reason }));
  if (unknown.length > 0) log.warn({ registry: report.registry, unknown }, what);
}

export function systemRoutes(deps: SystemRouteDeps): RouteDef[] {
  const log = deps.logger.child({ component: 'system' });

  const install = async (packageName: unknown): Promise<void> => {
    // a malformed name is refused before the project is read or anything runs
    const name = packageName === undefined ? undefined : typeof packageName === 'string' ? packageName : JSON.stringify(packageName);
    if (name !== undefined && (typeof packageName !== 'string' || !isValidPackageName(name))) throw new AppError('BAD_REQUEST', `Invalid package name: ${name}`);
    let tracked;
    try {
      tracked = trackedPackages(deps.updates.packageJson);
    } catch (err) {
      log.error({ err }, 'reading package.json failed');
      throw new AppError('INTERNAL', 'Failed to install updates');
    }
    let targets = tracked;
    if (name !== undefined) {
      const pkg = tracked.find((p) => p.name === name);
      if (!pkg) throw new AppError('BAD_REQUEST', `Invalid package name: ${name}`);
      targets = [pkg];
    } else {
      let report: UpdateReport;
      try {
        report = await checkUpdates(deps.updates);
      } catch (err) {
        log.error({ err }, 'update check before install failed');
        throw new AppError('INTERNAL', 'Failed to install updates');
      }
      // "every outdated package" cannot be told while some latest versions are unknown (and npm would not reach
      // the registry either): nothing is installed
      if (report.updates.some((u) => u.type === 'unknown')) {
        warnUnknown(log, report, 'update check before install incomplete');
        throw new AppError('INTERNAL', 'Failed to install updates');
      }
      const outdated = new Set(report.updates.filter((u) => u.type !== 'latest').map((u) => u.name));
      targets = tracked.filter((p) => outdated.has(p.name));
    }
    try {
      if (targets.length > 0) await installLatest(deps.updates, targets);
      log.info({ packages: targets.map((p) => p.name) }, 'updates installed');
    } catch (err) {
      log.error({ err, packages: targets.map((p) => p.name) }, 'installing updates failed');
      throw new AppError('INTERNAL', 'Failed to install updates');
    }
  };

  return [
    {
      method: 'POST',
      path: '/setup-observability',
      auth: 'host-changing',
      summary: 'Write SERVICE_PUBLIC_KEY and SERVICE_SECRET_KEY into ./.env (effective after a restart)',
      tags: ['System'],
      response: z.object({ message: z.string() }),
      handler: async (ctx: RequestContext) => {
        const { publicKey, secretKey } = (ctx.body ?? {}) as { publicKey?: unknown; secretKey?: unknown };
        if (typeof publicKey !== 'string' || typeof secretKey !== 'string' || publicKey === '' || secretKey === '') {
          throw new AppError('BAD_REQUEST', 'Missing publicKey or secretKey');
        }
        try {
          await writeEnvValues(deps.envFile, { SERVICE_PUBLIC_KEY: publicKey, SERVICE_SECRET_KEY: secretKey });
        } catch (err) {
          log.error({ err, file: deps.envFile }, 'writing the .env file failed');
          throw new AppError('INTERNAL', 'Failed to update .env file');
        }
        log.info({ file: deps.envFile }, 'observability keys written');
        return { kind: 'json', data: { message: SETUP_MESSAGE }, extra: { message: SETUP_MESSAGE } };
      },
    },
    {
      method: 'GET',
      path: '/updates',
      auth: 'management',
      summary: "Compare the server's own packages with the registry",
      tags: ['System'],
      response: z.object({ hasUpdates: z.boolean(), updates: z.array(updateSchema), count: z.number(), message: z.string(), registry: z.string() }),
      handler: async () => {
        let report: UpdateReport;
        try {
          report = await checkUpdates(deps.updates);
        } catch (err) {
          // only the project's package.json can fail the check; the registry's failures are per package
          log.warn({ err, packageJson: deps.updates.packageJson }, 'update check failed');
          throw new AppError('INTERNAL', 'Failed to check for updates: the project package.json could not be read');
        }
        warnUnknown(log, report, 'update check incomplete');
        return { kind: 'json', data: report };
      },
    },
    {
      method: 'POST',
      path: '/updates',
      auth: 'host-changing',
      summary: 'Install the latest version of one package (body packageName) or of every outdated one',
      tags: ['System'],
      body: z.object({ packageName: z.unknown().optional() }),
      response: z.object({ message: z.string() }),
      handler: async (ctx) => {
        await install((ctx.body as { packageName?: unknown }).packageName);
        return { kind: 'json', data: { message: INSTALLED } };
      },
    },
    {
      method: 'POST',
      path: '/updates/:packageName',
      auth: 'host-changing',
      summary: 'Install the latest version of one package',
      tags: ['System'],
      response: z.object({ message: z.string() }),
      handler: async (ctx) => {
        await install(ctx.params.packageName);
        return { kind: 'json', data: { message: INSTALLED } };
      },
    },
  ];
}
