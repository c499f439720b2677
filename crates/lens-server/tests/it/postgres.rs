//! A PostgreSQL database of its own for each test that asks: made in the server
//! `scripts/postgres` started (its URL in `LENS_TEST_DATABASE_URL`; `make test` runs the
//! workspace tests under it).

use std::sync::atomic::{AtomicU32, Ordering};

use sqlx::{Connection, PgConnection};

/// The URL of a new, empty database; `None` (with a line saying so) where no server was started.
pub async fn fresh_database() -> Option<String> {
    let Ok(base) = std::env::var("LENS_TEST_DATABASE_URL") else {
        eprintln!("skipped: no PostgreSQL server (run the tests under scripts/postgres, as make test does)");
        return None;
    };
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!("lens_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let mut admin = PgConnection::connect(&base).await.expect("the test PostgreSQL server answers");
    sqlx::query(&format!("CREATE DATABASE {name}")).execute(&mut admin).await.expect("a test database");
    let (server, _) = base.rsplit_once('/').expect("a database URL");
    Some(format!("{server}/{name}"))
}
