//! Certificates in the gateway's folder layout, as `openshell-gateway generate-certs`
//! writes them: `ca.crt`, `server/tls.{crt,key}`, `client/tls.{crt,key}`.

use std::path::Path;

use super::FakeError;
use rcgen::{BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};

/// The names the gateway's default server certificate carries.
pub const DEFAULT_SERVER_NAMES: &[&str] = &["openshell", "localhost", "127.0.0.1"];

/// The role `generate-certs` gives its client certificate (its OU): the gateway's
/// `openshell-user`, which every sandbox call needs.
pub const CLIENT_ROLE: &str = "openshell-user";

/// Makes a CA, a server certificate for `server_names` and a client certificate with
/// the gateway's user role, and writes them under `dir` in the gateway's layout.
pub fn write_certs(dir: &Path, server_names: &[&str]) -> Result<(), FakeError> {
    write_certs_with_role(dir, server_names, Some(CLIENT_ROLE))
}

/// As [`write_certs`], the client certificate carrying `role` as its OU (or none).
pub fn write_certs_with_role(dir: &Path, server_names: &[&str], role: Option<&str>) -> Result<(), FakeError> {
    let (ca_cert, issuer) = authority("openshell-ca")?;
    let leaf = |names: Vec<String>, usage: ExtendedKeyUsagePurpose, cn: &str, unit: Option<&str>| {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(names)?;
        params.extended_key_usages = vec![usage];
        params.distinguished_name.push(DnType::CommonName, cn);
        if let Some(unit) = unit {
            params.distinguished_name.push(DnType::OrganizationalUnitName, unit);
        }
        let cert = params.signed_by(&key, &issuer)?;
        Ok::<_, FakeError>((cert.pem(), key.serialize_pem()))
    };
    let server = leaf(
        server_names.iter().map(|s| s.to_string()).collect(),
        ExtendedKeyUsagePurpose::ServerAuth,
        "openshell",
        None,
    )?;
    let client = leaf(Vec::new(), ExtendedKeyUsagePurpose::ClientAuth, "openshell-client", role)?;
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(FakeError::io(parent.display()))?;
        }
        std::fs::write(&path, text).map_err(FakeError::io(path.display()))
    };
    write("ca.crt", &ca_cert.pem())?;
    write("server/tls.crt", &server.0)?;
    write("server/tls.key", &server.1)?;
    write("client/tls.crt", &client.0)?;
    write("client/tls.key", &client.1)
}

/// A new self-signed certificate authority named `common_name`, and its signer.
pub(crate) fn authority(common_name: &str) -> Result<(Certificate, Issuer<'static, KeyPair>), FakeError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, common_name);
    let cert = params.self_signed(&key)?;
    Ok((cert, Issuer::new(params, key)))
}
