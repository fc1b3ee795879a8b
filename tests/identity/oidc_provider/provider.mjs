// The OpenID provider the identity tests sign in against: the certified `oidc-provider`
// package with its development login form, one confidential client with PKCE required, and
// accounts from a JSON file. A test switches how it misbehaves with POST /_test/mode
// {"mode": ...}: "normal", "bad_signature" (the ID token's signature is broken in transit),
// "expired" (the ID token lives 1 s and arrives 2 s late) or "replay_nonce" (the ID token
// carries the nonce of the previous sign-in).
// Usage: node provider.mjs PORT ISSUER CONFIG.json   (prints "ready" once it listens)
import { readFileSync } from 'node:fs';
import Provider from 'oidc-provider';

const [port, issuer, configPath] = process.argv.slice(2);
const config = JSON.parse(readFileSync(configPath, 'utf8'));
let mode = 'normal';
let lastNonce = null;

const provider = new Provider(issuer, {
  clients: [config.client],
  jwks: { keys: [config.signing_key] },
  cookies: { keys: ['identity-tests-cookie-key'] },
  pkce: { required: () => true },
  scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username'],
    groups: ['groups', 'roles'],  // 'roles': a provider that names groups in another claim
  },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  ttl: { IdToken: () => (mode === 'expired' ? 1 : 3600) },
  async findAccount(ctx, id) {
    const claims = config.accounts[id];
    if (!claims) return undefined;
    return { accountId: id, claims: async () => ({ sub: id, ...claims }) };
  },
  async loadExistingGrant(ctx) {
    // A first-party client: no consent screen, every asked-for scope granted.
    const grantId = ctx.oidc.result?.consent?.grantId
      || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope(ctx.oidc.params.scope);
    await grant.save();
    return grant;
  },
});

provider.use(async (ctx, next) => {
  if (ctx.path === '/_test/mode' && ctx.method === 'POST') {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    mode = JSON.parse(Buffer.concat(chunks).toString()).mode;
    ctx.body = { mode };
    return;
  }
  if (ctx.path === '/auth' && ctx.query.nonce) {
    const asked = ctx.query.nonce;
    if (mode === 'replay_nonce' && lastNonce) ctx.query = { ...ctx.query, nonce: lastNonce };
    lastNonce = asked;
  }
  await next();
  if (ctx.path === '/token' && ctx.body && ctx.body.id_token) {
    if (mode === 'bad_signature') {
      const [head, body, signature] = ctx.body.id_token.split('.');
      const flipped = (signature[5] === 'A' ? 'B' : 'A');
      ctx.body = { ...ctx.body, id_token: `${head}.${body}.${signature.slice(0, 5)}${flipped}${signature.slice(6)}` };
    } else if (mode === 'expired') {
      await new Promise((resolve) => setTimeout(resolve, 2100));
    }
  }
});

// What the provider refused, and why, for a test that fails (in the folder's provider.log).
for (const event of ['server_error', 'end_session.error', 'grant.error', 'authorization.error']) {
  provider.on(event, (ctx, error) => console.error(event, error, error.cause ?? ''));
}

provider.listen(Number(port), '127.0.0.1', () => console.log('ready'));
