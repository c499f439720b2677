//! A run that prints far more than anyone reads: the driver's memory stays flat, because
//! the agent (and the program) wait for a slow reader instead of the driver queueing.
//! Its own test binary, so no other test's memory is counted.

use lens_sandbox::{LocalDriver, LocalOptions};

mod common;

use common::agent;

fn driver() -> (LocalDriver, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &agent())).unwrap(), dir)
}

#[tokio::test]
async fn a_flood_read_slowly_does_not_grow_the_driver() {
    let (d, _dir) = driver();
    common::flood_read_slowly(&d).await;
}
