//! Who is asking: passwords, session cookies with their CSRF proof, API tokens, and the
//! login rate limit.
//!
//! A request is authenticated by `Authorization: Bearer <token>` (agents) or by the
//! `lens_session` cookie (the browser; `__Host-lens_session` over HTTPS). Cookie requests
//! with an unsafe method must also carry `X-CSRF-Token` equal to the session's proof and
//! come from Lens's own page (`Origin` / `Sec-Fetch-Site`); token requests need not, since
//! a browser never attaches a Bearer token on its own.

mod accounts;
pub mod client_addr;
mod current_user;
pub mod oidc;
mod password;
mod rate_limit;
mod session_start;
mod setup_code;
pub mod sign_ins;

pub use accounts::Accounts;
pub use current_user::{
    AdminUser, AnyScope, Approver, ClientAddr, CurrentUser, Https, SECURE_SESSION_COOKIE, SESSION_COOKIE,
    session_cookie, session_cookie_name,
};
pub(crate) use current_user::{bearer, is_safe, same_secret};
pub use password::{check_password_rules, hash_password, verify_password};
pub use rate_limit::LoginLimiter;
pub use setup_code::SetupCode;
