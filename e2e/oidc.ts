// The test's OpenID Connect provider (oidc-provider.mjs, panva's oidc-provider): where it
// listens and the client Lens is registered as. Not 8184 or 8185: network.spec.ts starts
// a Lens of its own there (port + 3, and its preview beside it).
export const OIDC_PORT = process.env.LENS_E2E_OIDC_PORT ?? '8186';
export const OIDC_ISSUER = `http://127.0.0.1:${OIDC_PORT}`;
export const OIDC_CLIENT_ID = 'lens';
export const OIDC_CLIENT_SECRET = 'lens-e2e-secret-0123456789abcdef';
