//! The flood of `flood.rs` through a gateway: the fake gateway's pipes, gRPC's flow
//! control and the agent's frames all wait for the slow reader, so nothing piles up.
//! Its own test binary, so no other test's memory is counted (the fake's is, which
//! only makes the bound stricter).

use lens_openshell::fake::FakeGateway;
use lens_sandbox::{DriverSettings, GatewayAddress, GatewayOptions};

mod common;

#[tokio::test]
async fn a_flood_through_the_gateway_read_slowly_does_not_grow_the_driver() {
    let fake = FakeGateway::start().await.unwrap();
    let address =
        GatewayAddress { address: fake.address_string(), cert_dir: fake.cert_dir().to_owned(), server_name: None };
    let settings = DriverSettings {
        limits: Default::default(),
        admission: lens_sandbox::AdmissionLimits::for_host(),
        pool_size: 0,
        network: None,
    };
    let d = lens_sandbox::start_gateway(GatewayOptions::new(address, common::agent()), &settings).unwrap();
    common::flood_read_slowly(&*d).await;
}
