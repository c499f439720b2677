//! A test-only bridge in front of NVIDIA's real gateway built from its newest public
//! source (0.0.x), so that Lens's own client, which speaks only 0.1.x, runs against it
//! unchanged: a gRPC server of Lens's `.proto` over mutual TLS that forwards each call
//! Lens makes, its few differing fields rewritten on the wire (`translate.rs`), and
//! passes everything else through byte for byte. Nothing of it is in Lens's server.

mod error;
mod translate;
mod wire;

use std::{net::SocketAddr, pin::Pin};

use futures_util::{Stream, StreamExt};
use prost::Message as _;
use tonic::{
    Request, Response, Status, Streaming,
    codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder},
    transport::{Certificate, Channel, Identity, Server, ServerTlsConfig},
};

use crate::{
    GatewayAddress, GatewayError,
    client::MAX_MESSAGE,
    proto::openshell::v1::{
        CreateSandboxRequest, DeleteSandboxRequest, DeleteSandboxResponse, ExecSandboxEvent, ExecSandboxInput,
        ExecSandboxRequest, GetSandboxLogsRequest, GetSandboxLogsResponse, GetSandboxRequest, HealthRequest,
        HealthResponse, ListSandboxesRequest, ListSandboxesResponse, SandboxResponse, StartSandboxRequest,
        StopSandboxRequest, UpdateConfigRequest, UpdateConfigResponse,
        open_shell_server::{OpenShell, OpenShellServer},
    },
};

/// Messages as their bytes: the bridge rewrites them itself.
#[derive(Debug, Clone, Copy, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;

    fn encoder(&mut self) -> Raw {
        Raw
    }

    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        bytes::BufMut::put_slice(dst, &item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = bytes::Buf::remaining(src);
        Ok(Some(bytes::Buf::copy_to_bytes(src, n).to_vec()))
    }
}

type Events = Pin<Box<dyn Stream<Item = Result<ExecSandboxEvent, Status>> + Send>>;

fn typed<M: prost::Message + Default>(bytes: Vec<u8>) -> Result<Response<M>, Status> {
    Ok(Response::new(M::decode(&*bytes).map_err(error::WireError::from)?))
}

fn path(method: &str) -> http::uri::PathAndQuery {
    http::uri::PathAndQuery::try_from(format!("/openshell.v1.OpenShell/{method}"))
        .unwrap_or_else(|_| http::uri::PathAndQuery::from_static("/"))
}

struct Bridge {
    gateway: Channel,
}

impl Bridge {
    fn grpc(&self) -> tonic::client::Grpc<Channel> {
        tonic::client::Grpc::new(self.gateway.clone())
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE)
    }

    async fn unary(&self, method: &str, body: Vec<u8>) -> Result<Vec<u8>, Status> {
        let mut grpc = self.grpc();
        grpc.ready().await.map_err(|e| Status::unavailable(format!("the gateway: {e}")))?;
        Ok(grpc.unary(Request::new(body), path(method), Raw).await?.into_inner())
    }

    /// A call that names one sandbox and answers with it (get, stop, start).
    async fn by_name(&self, method: &str, request: Vec<u8>) -> Result<Response<SandboxResponse>, Status> {
        let body = translate::by_name(&request)?;
        typed(translate::sandbox_response(&self.unary(method, body).await?)?)
    }

    /// The sandbox's id on the gateway, looked up by its name.
    async fn id_of(&self, name: &str) -> Result<String, Status> {
        let answer = self.unary("GetSandbox", translate::get_by_name(name)).await?;
        Ok(translate::sandbox_id(&answer)?)
    }
}

#[tonic::async_trait]
impl OpenShell for Bridge {
    type ExecSandboxStream = Events;
    type ExecSandboxInteractiveStream = Events;

    async fn health(&self, r: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        typed(self.unary("Health", r.into_inner().encode_to_vec()).await?)
    }

    async fn create_sandbox(&self, r: Request<CreateSandboxRequest>) -> Result<Response<SandboxResponse>, Status> {
        let body = translate::create(&r.into_inner().encode_to_vec())?;
        typed(translate::sandbox_response(&self.unary("CreateSandbox", body).await?)?)
    }

    async fn get_sandbox(&self, r: Request<GetSandboxRequest>) -> Result<Response<SandboxResponse>, Status> {
        self.by_name("GetSandbox", r.into_inner().encode_to_vec()).await
    }

    async fn list_sandboxes(
        &self,
        r: Request<ListSandboxesRequest>,
    ) -> Result<Response<ListSandboxesResponse>, Status> {
        let (body, offset, limit) = translate::list(&r.into_inner().encode_to_vec())?;
        typed(translate::listed(&self.unary("ListSandboxes", body).await?, offset, limit)?)
    }

    async fn stop_sandbox(&self, r: Request<StopSandboxRequest>) -> Result<Response<SandboxResponse>, Status> {
        self.by_name("StopSandbox", r.into_inner().encode_to_vec()).await
    }

    async fn start_sandbox(&self, r: Request<StartSandboxRequest>) -> Result<Response<SandboxResponse>, Status> {
        self.by_name("StartSandbox", r.into_inner().encode_to_vec()).await
    }

    async fn delete_sandbox(
        &self,
        r: Request<DeleteSandboxRequest>,
    ) -> Result<Response<DeleteSandboxResponse>, Status> {
        let (body, allow_missing) = translate::delete(&r.into_inner().encode_to_vec())?;
        match self.unary("DeleteSandbox", body).await {
            Ok(answer) => typed(translate::deleted(&answer)?),
            Err(s) if s.code() == tonic::Code::NotFound && allow_missing => typed(translate::already_absent()),
            Err(s) => Err(s),
        }
    }

    async fn exec_sandbox(&self, r: Request<ExecSandboxRequest>) -> Result<Response<Events>, Status> {
        let bytes = r.into_inner().encode_to_vec();
        let id = self.id_of(&translate::named_sandbox(&bytes)?).await?;
        let body = translate::exec(&bytes, &id)?;
        let mut grpc = self.grpc();
        grpc.ready().await.map_err(|e| Status::unavailable(format!("the gateway: {e}")))?;
        let events = grpc.server_streaming(Request::new(body), path("ExecSandbox"), Raw).await?.into_inner();
        Ok(Response::new(events_of(events)))
    }

    async fn exec_sandbox_interactive(
        &self,
        r: Request<Streaming<ExecSandboxInput>>,
    ) -> Result<Response<Events>, Status> {
        let mut frames = r.into_inner();
        let first = frames.message().await?.ok_or_else(|| Status::invalid_argument("no start frame"))?;
        let first = first.encode_to_vec();
        let id = self.id_of(&translate::exec_start_sandbox(&first)?).await?;
        let start = translate::exec_start(&first, &id)?;
        // The rest as they come; their end (Lens's half-close) is the gateway's to act on.
        let rest = futures_util::stream::unfold(frames, |mut frames| async move {
            match frames.message().await {
                Ok(Some(frame)) => Some((frame.encode_to_vec(), frames)),
                _ => None,
            }
        });
        let outgoing = futures_util::stream::iter([start]).chain(rest);
        let mut grpc = self.grpc();
        grpc.ready().await.map_err(|e| Status::unavailable(format!("the gateway: {e}")))?;
        let events = grpc.streaming(Request::new(outgoing), path("ExecSandboxInteractive"), Raw).await?.into_inner();
        Ok(Response::new(events_of(events)))
    }

    async fn update_config(&self, r: Request<UpdateConfigRequest>) -> Result<Response<UpdateConfigResponse>, Status> {
        let body = translate::update_config(&r.into_inner().encode_to_vec())?;
        typed(self.unary("UpdateConfig", body).await?)
    }

    async fn get_sandbox_logs(
        &self,
        r: Request<GetSandboxLogsRequest>,
    ) -> Result<Response<GetSandboxLogsResponse>, Status> {
        let bytes = r.into_inner().encode_to_vec();
        let id = self.id_of(&translate::named_sandbox(&bytes)?).await?;
        let body = translate::get_logs(&bytes, &id)?;
        typed(translate::logs(&self.unary("GetSandboxLogs", body).await?)?)
    }
}

/// The gateway's exec events, which are the same on both sides.
fn events_of(events: Streaming<Vec<u8>>) -> Events {
    Box::pin(events.map(|event| {
        let bytes = event?;
        Ok(ExecSandboxEvent::decode(&*bytes).map_err(error::WireError::from)?)
    }))
}

/// A running bridge.
pub struct RunningBridge {
    pub address: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for RunningBridge {
    fn drop(&mut self) {
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
    }
}

/// Starts the bridge on `listen` in front of `gateway`, with the gateway's own certificate
/// folder: its server certificate for Lens, its client certificate for the gateway.
pub async fn start(listen: SocketAddr, gateway: &GatewayAddress) -> Result<RunningBridge, GatewayError> {
    let channel = crate::client::channel(gateway).await?;
    let read = |rel: &str| {
        std::fs::read(gateway.cert_dir.join(rel))
            .map_err(|e| GatewayError::Certificates(format!("{rel} in {}: {e}", gateway.cert_dir.display())))
    };
    let tls = ServerTlsConfig::new()
        .identity(Identity::from_pem(read("server/tls.crt")?, read("server/tls.key")?))
        .client_ca_root(Certificate::from_pem(read("ca.crt")?));
    let incoming = tonic::transport::server::TcpIncoming::bind(listen)
        .map_err(|e| GatewayError::Connect(format!("the bridge could not listen on {listen}: {e}")))?
        .with_nodelay(Some(true));
    let address = incoming.local_addr().map_err(|e| GatewayError::Connect(e.to_string()))?;
    let service = OpenShellServer::new(Bridge { gateway: channel })
        .max_decoding_message_size(MAX_MESSAGE)
        .max_encoding_message_size(MAX_MESSAGE);
    let server =
        Server::builder().tls_config(tls).map_err(|e| GatewayError::Certificates(e.to_string()))?.add_service(service);
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        if let Err(e) = server
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stop.await;
            })
            .await
        {
            tracing::warn!(error = %e, "the bridge stopped");
        }
    });
    Ok(RunningBridge { address, shutdown: Some(shutdown) })
}
