//! What every Lambda binary shares: configuration and clients built once per cold start, JSON
//! logs for CloudWatch, an HTTP router served through API Gateway, or an SQS worker.

use std::sync::Arc;

use aws_lambda_events::sqs::{BatchItemFailure, SqsBatchResponse, SqsEvent, SqsMessage};
use axum::Router;
use booktr_api::{AppState, Settings};
use booktr_core::config::{Config, LogFormat};
use booktr_core::jobs::runner::{self, Worker};
use booktr_core::ports::{Received, SystemClock};
use booktr_outbound::EnvModels;
use lambda_runtime::{service_fn, LambdaEvent};
use tracing::error;

use crate::wiring::{self, AwsResources, Managed};

pub type Error = lambda_runtime::Error;

/// The process's services on the AWS adapters, with JSON logs.
pub async fn start() -> Result<(Config, Managed), Error> {
    let config = Config::from_env()?;
    // CloudWatch reads one JSON object per line, whatever the local default is.
    crate::telemetry::init(&config.log_filter, LogFormat::Json);
    let function = std::env::var("AWS_LAMBDA_FUNCTION_NAME").unwrap_or_default();
    crate::metrics::emf::install(&function);
    let resources = AwsResources::from_env()?;
    let clients = booktr_aws::Clients::from_env().await;
    let managed = wiring::managed(
        &config,
        clients,
        &resources,
        Arc::new(SystemClock),
        Arc::new(EnvModels::from_env()),
    )?;
    Ok((config, managed))
}

/// Serves one endpoint group's router behind API Gateway.
pub async fn serve_http(routes: booktr_api::Routes) -> Result<(), Error> {
    let (config, managed) = start().await?;
    let state = AppState::new(
        managed.services,
        Settings {
            public_url: config.public_url,
            // API Gateway's own view of the caller is used instead (see `http_app`).
            trust_forwarded_for: false,
            body_limit: Some(booktr_api::LAMBDA_BODY_LIMIT),
            upload_origin: upload_origin(),
        },
    );
    lambda_http::run(http_app(routes, state)).await
}

/// Where the web app's script posts direct uploads: the bucket's virtual-hosted origin.
fn upload_origin() -> Option<String> {
    let bucket = std::env::var("BOOKTR_BUCKET").ok()?;
    let region = std::env::var("AWS_REGION").ok()?;
    Some(format!("https://{bucket}.s3.{region}.amazonaws.com"))
}

/// The group's router as a Lambda serves it: every shared layer, and the caller's address from
/// API Gateway's request context (its `sourceIp`), which clients cannot forge the way they can
/// an `X-Forwarded-For` header.
pub fn http_app(routes: booktr_api::Routes, state: AppState) -> Router {
    booktr_api::finish(routes, state).layer(axum::middleware::from_fn(
        |mut request: axum::extract::Request, next: axum::middleware::Next| async move {
            use lambda_http::request::RequestContext;
            use lambda_http::RequestExt;
            let source = match request.request_context_ref() {
                Some(RequestContext::ApiGatewayV2(context)) => context.http.source_ip.clone(),
                _ => None,
            };
            if let Some(ip) = source.and_then(|s| s.parse().ok()) {
                request.extensions_mut().insert(booktr_api::ClientIp(ip));
            }
            let response = next.run(request).await;
            crate::metrics::emf::flush();
            response
        },
    ))
}

/// Runs the worker of one queue: each SQS event is processed in order, failures reported per
/// item (`ReportBatchItemFailures`).
pub async fn serve_queue(worker: Worker) -> Result<(), Error> {
    let (_, managed) = start().await?;
    let managed = Arc::new(managed);
    lambda_runtime::run(service_fn(move |event: LambdaEvent<SqsEvent>| {
        let managed = managed.clone();
        async move {
            let handled = handle_sqs(&managed, worker, event.payload).await;
            crate::metrics::emf::flush();
            handled
        }
    }))
    .await
}

/// One SQS event through the job handler. Public so tests feed the `infra/events/` fixtures
/// through it in-process.
pub async fn handle_sqs(
    managed: &Managed,
    worker: Worker,
    event: SqsEvent,
) -> Result<SqsBatchResponse, Error> {
    let messages: Vec<Received> = event.records.into_iter().map(received).collect();
    let failed = runner::process_delivered(
        managed.ports.queue.as_ref(),
        &managed.services.jobs,
        worker,
        &messages,
    )
    .await
    .inspect_err(|e| error!(error = %e, "could not reach the queue"))?;
    let mut response = SqsBatchResponse::default();
    response.batch_item_failures = failed
        .into_iter()
        .map(|id| {
            let mut failure = BatchItemFailure::default();
            failure.item_identifier = id;
            failure
        })
        .collect();
    Ok(response)
}

fn received(message: SqsMessage) -> Received {
    let attribute = |name: &str| message.attributes.get(name).cloned();
    Received {
        receive_count: attribute("ApproximateReceiveCount")
            .and_then(|c| c.parse().ok())
            .unwrap_or(1),
        group: attribute("MessageGroupId").unwrap_or_default(),
        id: message.message_id.clone().unwrap_or_default(),
        receipt: message.receipt_handle.clone().unwrap_or_default(),
        body: message.body.clone().unwrap_or_default(),
    }
}

/// The weekly digest's schedule (EventBridge, hourly): queues the digests that are due. The
/// event's content does not matter; what is due follows from the time.
pub async fn serve_schedule() -> Result<(), Error> {
    let (_, managed) = start().await?;
    let managed = Arc::new(managed);
    lambda_runtime::run(service_fn(move |_: LambdaEvent<serde_json::Value>| {
        let managed = managed.clone();
        async move {
            let handled = handle_schedule(&managed).await;
            crate::metrics::emf::flush();
            handled
        }
    }))
    .await
}

/// One scheduled event: how many digests were queued. Public so tests run it in-process.
pub async fn handle_schedule(managed: &Managed) -> Result<serde_json::Value, Error> {
    let queued = managed
        .services
        .digests
        .queue_due()
        .await
        .inspect_err(|e| error!(error = %e, "could not queue the weekly digests"))?;
    Ok(serde_json::json!({ "queued": queued }))
}
