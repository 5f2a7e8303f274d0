//! HTTPS with rustls: the server's certificate and key, and, with a client CA, mutual TLS.

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig, crypto};

use crate::{ServeError, TlsFiles};

pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, ServeError> {
    let certs = certificates(&files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| {
        ServeError::Tls(format!(
            "cannot read the key `{}`: {e}",
            files.key.display()
        ))
    })?;
    let provider = Arc::new(crypto::ring::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ServeError::Tls(e.to_string()))?;
    let builder = match &files.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(ca)? {
                roots.add(cert).map_err(|e| {
                    ServeError::Tls(format!(
                        "`{}` holds a certificate rustls refuses: {e}",
                        ca.display()
                    ))
                })?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| ServeError::Tls(format!("the client CA `{}`: {e}", ca.display())))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder.with_single_cert(certs, key).map_err(|e| {
        ServeError::Tls(format!("the certificate and key do not make a server: {e}"))
    })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, ServeError> {
    let unreadable = |e: &dyn std::fmt::Display| {
        ServeError::Tls(format!(
            "cannot read certificates from `{}`: {e}",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| unreadable(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| unreadable(&e))?;
    if certs.is_empty() {
        return Err(unreadable(&"the file holds no PEM certificate"));
    }
    Ok(certs)
}
