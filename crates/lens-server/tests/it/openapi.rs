//! The OpenAPI document lists every route, and every listed route exists.

use lens_server::openapi::ROUTES;
use reqwest::{Method, StatusCode};

use crate::test_app::TestApp;

#[tokio::test]
async fn every_documented_route_is_served() {
    let app = TestApp::new().await;
    let admin = app.admin().await;
    let doc = admin.get("/api/v1/openapi.json").await.1;
    assert_eq!(doc["openapi"], "3.1.0");
    let paths: std::collections::HashSet<_> = ROUTES.iter().map(|r| r.path).collect();
    assert_eq!(doc["paths"].as_object().unwrap().len(), paths.len());
    for route in ROUTES {
        assert!(doc["paths"][route.path][route.method].is_object(), "{} {} is documented", route.method, route.path);
        let path = route.path.replace("{cid}", "nochat").replace("{aid}", "noanswer").replace("{id}", "0");
        let method = Method::from_bytes(route.method.to_uppercase().as_bytes()).unwrap();
        let req = admin.request(method, &path).header("content-type", "application/json").body("{}");
        let (status, body) = admin.send(req).await;
        // Handlers may refuse these ids or this body, but the router must know the route.
        assert_ne!(body["error"]["message"], "there is no API route at this path", "{} {path}", route.method);
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert!(
            !(status == StatusCode::BAD_REQUEST && body["error"]["message"] == "this route does not take that method")
        );
    }
}
