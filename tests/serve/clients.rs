//! The server as its clients see it: a Python agent, and the OpenAPI description checked
//! against real answers.

use std::process::Command;

use serde_json::{Value, json};

use crate::default_server;

#[test]
fn a_python_agent_on_the_standard_library_is_guarded() {
    let (_dir, server) = default_server("python");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/serve/client.py");
    let output = Command::new("python3")
        .arg(script)
        .arg(format!("http://{}", server.addr))
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "python agent: ok"
    );
}

fn openapi() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/lang-spec/serve.openapi.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A validator for `schema`, whose `$ref`s point into the description's components.
fn validator(spec: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = schema.clone();
    root["components"] = spec["components"].clone();
    root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    jsonschema::validator_for(&root).unwrap()
}

/// The schema of a response, following a `$ref` to a shared response.
fn response_schema<'a>(spec: &'a Value, response: &'a Value) -> Option<&'a Value> {
    let response = match response["$ref"].as_str() {
        Some(reference) => spec.pointer(reference.trim_start_matches('#')).unwrap(),
        None => response,
    };
    response["content"]["application/json"].get("schema")
}

#[test]
fn every_operation_of_the_openapi_description_answers_as_described() {
    let spec = openapi();
    let (_dir, server) = default_server("openapi");
    let mut checked = 0;
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let concrete = match operation["parameters"].as_array() {
                Some(parameters) => parameters.iter().fold(path.clone(), |path, p| {
                    let name = p["name"].as_str().unwrap();
                    path.replace(&format!("{{{name}}}"), p["example"].as_str().unwrap())
                }),
                None => path.clone(),
            };
            let body = &operation["requestBody"]["content"]["application/json"];
            let answer = match method.as_str() {
                "get" => server.get(&concrete),
                "post" => {
                    let example = &body["example"];
                    // The example is itself what the request schema describes.
                    let request = validator(&spec, &body["schema"]);
                    assert!(
                        request.is_valid(example),
                        "{method} {path}: the example is not valid"
                    );
                    server.post(&concrete, &example.to_string())
                }
                other => panic!("{other} is not a method the server has"),
            };
            let status = answer.status.to_string();
            let response = &operation["responses"][&status];
            assert!(
                !response.is_null(),
                "{method} {path} answered {status}, not described"
            );
            if let Some(schema) = response_schema(&spec, response) {
                let validator = validator(&spec, schema);
                let value = answer.json();
                let errors: Vec<String> = validator
                    .iter_errors(&value)
                    .map(|e| format!("{e} at {}", e.instance_path()))
                    .collect();
                assert!(errors.is_empty(), "{method} {path}: {errors:?}\n{value}");
            }
            // Each described error is the one error shape.
            for (code, response) in operation["responses"].as_object().unwrap() {
                if code.starts_with('4') {
                    let schema = response_schema(&spec, response).unwrap();
                    assert_eq!(
                        schema["$ref"], "#/components/schemas/Error",
                        "{method} {path} {code}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 10, "every endpoint is described");
    // And an error answer matches the described error.
    let error = server.post("/v1/decide", "{").json();
    let schema = json!({ "$ref": "#/components/schemas/Error" });
    assert!(validator(&spec, &schema).is_valid(&error), "{error}");
}
