// A real OpenID Connect provider for the tests: panva's certified `oidc-provider`, on
// loopback, with a login page of our own (devInteractions off) and five people:
//
//   ada     staff                  signs in
//   root    staff, lens-admins     signs in, an admin by group
//   cory    contractors            a group Lens does not allow
//   late    staff                  its ID token comes back expired (re-signed with the
//                                  provider's own key, exp an hour ago)
//   mallory staff                  its ID token comes back tampered with (sub changed to
//                                  ada's, the signature left as it was)
//
// Every password is "correct horse". The client (OIDC_CLIENT_ID, OIDC_CLIENT_SECRET) may
// come back to Lens's callback on any loopback port. Prints `issuer <url>` when it listens.
//
//   OIDC_PORT=0 OIDC_CLIENT_ID=lens OIDC_CLIENT_SECRET=... node oidc-provider.mjs
import { createServer } from 'node:http';
import { generateKeyPairSync, sign } from 'node:crypto';
import Provider from 'oidc-provider';

const clientId = process.env.OIDC_CLIENT_ID || 'lens';
const clientSecret = process.env.OIDC_CLIENT_SECRET || 'lens-test-secret-0123456789abcdef';
const port = Number(process.env.OIDC_PORT || 0);

const people = {
  ada: { groups: ['staff'], name: 'Ada Lovelace' },
  root: { groups: ['staff', 'lens-admins'], name: 'Root Admin' },
  cory: { groups: ['contractors'], name: 'Cory Contractor' },
  late: { groups: ['staff'], name: 'Late Token' },
  mallory: { groups: ['staff'], name: 'Mallory' },
};
const PASSWORD = 'correct horse';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key-1', use: 'sig', alg: 'RS256' };

const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const parts = (jwt) => jwt.split('.').map((p, i) => (i < 2 ? JSON.parse(Buffer.from(p, 'base64url')) : p));

// An ID token as a misbehaving provider (or someone on the way) would send it.
function spoil(idToken) {
  const [header, payload, signature] = parts(idToken);
  if (payload.sub === 'late') {
    const now = Math.floor(Date.now() / 1000);
    const body = `${b64(header)}.${b64({ ...payload, iat: now - 7200, exp: now - 3600 })}`;
    return `${body}.${sign('sha256', Buffer.from(body), privateKey).toString('base64url')}`;
  }
  if (payload.sub === 'mallory') {
    return `${b64(header)}.${b64({ ...payload, sub: 'ada' })}.${signature}`;
  }
  return idToken;
}

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title, body) => `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title></head><body><main>${body}</main></body></html>`;

function loginForm(uid, error) {
  return page('Sign in to Test ID', `<h1>Test ID</h1>
    ${error ? `<p role="alert">${escape(error)}</p>` : ''}
    <form method="post" action="/interaction/${escape(uid)}/login">
      <label>Username <input name="login" autocomplete="username" autofocus></label>
      <label>Password <input name="password" type="password" autocomplete="current-password"></label>
      <button type="submit">Continue</button>
    </form>`);
}

async function readForm(req) {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return Object.fromEntries(new URLSearchParams(raw));
}

const server = createServer();
server.listen(port, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: ['http://127.0.0.1/api/v1/auth/oidc/callback'],
      post_logout_redirect_uris: ['http://127.0.0.1/'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }],
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    scopes: ['openid', 'profile', 'email', 'groups'],
    claims: {
      openid: ['sub'],
      profile: ['name', 'preferred_username'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx, form) => {
          ctx.body = page('Sign out of Test ID', `<h1>Sign out of Test ID?</h1>${form}
            <button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>`);
        },
        postLogoutSuccessSource: async (ctx) => {
          ctx.body = page('Signed out', '<h1>You are signed out of Test ID</h1>');
        },
      },
    },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (ctx, sub) => {
      const who = people[sub];
      if (!who) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          name: who.name,
          preferred_username: sub,
          email: `${sub}@example.test`,
          email_verified: true,
          groups: who.groups,
        }),
      };
    },
  });
  // Lens runs on whatever loopback port its test took.
  const loopbackLens = (path) => (uri) => {
    try {
      const u = new URL(uri);
      return u.protocol === 'http:' && ['127.0.0.1', 'localhost'].includes(u.hostname) && u.pathname === path && !u.search;
    } catch { return false; }
  };
  provider.Client.prototype.redirectUriAllowed = loopbackLens('/api/v1/auth/oidc/callback');
  provider.Client.prototype.postLogoutRedirectUriAllowed = loopbackLens('/');

  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === '/token' && ctx.status === 200 && ctx.body?.id_token) {
      ctx.body = { ...ctx.body, id_token: spoil(ctx.body.id_token) };
    }
  });

  const handle = provider.callback();
  server.on('request', async (req, res) => {
    const m = req.url.match(/^\/interaction\/([^/?]+)(\/login)?/);
    if (!m) return handle(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'consent') {
        const grant = new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
        const missing = details.prompt.details;
        if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
        if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
        const grantId = await grant.save();
        return provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
      }
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (req.method === 'GET') return res.end(loginForm(details.uid));
      const form = await readForm(req);
      if (!people[form.login] || form.password !== PASSWORD) {
        res.statusCode = 200;
        return res.end(loginForm(details.uid, 'Wrong username or password.'));
      }
      return provider.interactionFinished(req, res, { login: { accountId: form.login } }, { mergeWithLastSubmission: false });
    } catch (e) {
      res.statusCode = 400;
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(page('Error', `<h1>Test ID: ${escape(e.message)}</h1>`));
    }
  });
  console.log(`issuer ${issuer}`);
});
