//! Compiles Lens's copy of the gateway's .proto without a system `protoc` (protox parses
//! it in Rust), into a client and a server (the fake gateway uses the server).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/openshell.proto", "proto/datamodel.proto", "proto/sandbox.proto"];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure().build_client(true).build_server(true).compile_fds(descriptors)?;
    Ok(())
}
