//! Decisions per second, side by side: Sluice (JIT and interpreter), Cedar (naive and sliced by
//! tool), Rego through regorus (rules as rules, and rules as data; on its RVM and on its
//! tree-walking engine), and a hand-written
//! Rust function with the rules indexed by tool (the floor). Every engine gets the same
//! generated policy at N = 10, 100 and 1,000 rules; before timing, all engines must agree on
//! every request. Run with `cargo bench -p sluice-compiler --features peers --bench decisions`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // bench code may panic

mod scenario;

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::Value as Json;

use scenario::{Check, Request, Rule};
use sluice_compiler::call::{Agent, Call};
use sluice_compiler::db::Database;
use sluice_compiler::decision::Decision;
use sluice_compiler::executable::Executable;
use sluice_compiler::ir::Program;
use sluice_compiler::jit::Backend;

const SIZES: [usize; 3] = [10, 100, 1000];

fn sluice_program(rules: &[Rule]) -> Arc<Program> {
    let text = scenario::sluice(rules);
    let compiled = Database::default().compile_texts("bench", vec![("bench.sluice".into(), text)]);
    assert!(!compiled.has_errors(), "{:#?}", compiled.errors());
    compiled.program.expect("program")
}

fn sluice_call(request: &Request) -> Call {
    let mut call = Call::new(
        request.tool.clone(),
        serde_json::json!({ "command": request.command, "path": request.path }),
    );
    call.agent = Agent {
        id: request.agent.clone(),
        labels: request.labels.clone(),
        presets: Vec::new(),
    };
    call
}

/// A decision as the runtime asks for one (`Evaluator::precheck_and_gates`): the pre-checks'
/// outcome with its provenance (every matching rule, the deciding one, its reason) and, unless
/// they deny, every gate's veto.
fn sluice_allows(executable: &Executable, call: &Call) -> bool {
    let (precheck, vetoes) = executable.evaluator().precheck_and_gates(call);
    precheck.decision != Decision::Deny && vetoes.is_some_and(|vetoes| vetoes.is_empty())
}

/// The whole outcome `sluice eval` prints (`Evaluator::evaluate`): the above, every gate even
/// after a denial, the concurrency verdict and the tool's name.
fn sluice_evaluates_to_allow(executable: &Executable, call: &Call) -> bool {
    executable.evaluator().evaluate(call).decision != Decision::Deny
}

/// The floor: what a careful engineer writes by hand for exactly these rules. Per tool, one
/// regex set over the command (substrings and regexes) and one over the path (prefixes).
struct Floor {
    by_tool: HashMap<String, (regex::RegexSet, regex::RegexSet)>,
}

impl Floor {
    fn new(rules: &[Rule]) -> Floor {
        let mut patterns: HashMap<String, (Vec<String>, Vec<String>)> = HashMap::new();
        for rule in rules {
            let (command, path) = patterns.entry(rule.tool.clone()).or_default();
            match &rule.check {
                Check::PathPrefix(prefix) => path.push(format!("^{}", regex::escape(prefix))),
                Check::Substring(needle) => command.push(regex::escape(needle)),
                Check::Regex(start, end) => command.push(format!("^{start} .*{end}")),
            }
        }
        let by_tool = patterns
            .into_iter()
            .map(|(tool, (command, path))| {
                let set = |p: Vec<String>| regex::RegexSet::new(p).expect("valid");
                (tool, (set(command), set(path)))
            })
            .collect();
        Floor { by_tool }
    }

    fn allows(&self, call: &Call) -> bool {
        if call.agent.labels.iter().any(|l| l == "readonly") {
            return false;
        }
        let Some((command, path)) = self.by_tool.get(&call.tool) else {
            return true;
        };
        let field = |name: &str| call.args.get(name).and_then(Json::as_str).unwrap_or("");
        !(command.is_match(field("command")) || path.is_match(field("path")))
    }
}

struct Cedar {
    policies: cedar_policy::PolicySet,
    sliced: HashMap<String, cedar_policy::PolicySet>,
    entities: cedar_policy::Entities,
    authorizer: cedar_policy::Authorizer,
}

impl Cedar {
    fn new(rules: &[Rule]) -> Cedar {
        Cedar {
            policies: scenario::cedar(rules).parse().expect("cedar parses"),
            sliced: scenario::cedar_sliced(rules)
                .into_iter()
                .map(|(tool, text)| (tool, text.parse().expect("cedar parses")))
                .collect(),
            entities: cedar_policy::Entities::empty(),
            authorizer: cedar_policy::Authorizer::new(),
        }
    }

    fn request(request: &Request) -> cedar_policy::Request {
        let uid = |text: String| text.parse::<cedar_policy::EntityUid>().expect("uid");
        let context = cedar_policy::Context::from_json_value(
            serde_json::json!({
                "command": request.command,
                "path": request.path,
                "labels": request.labels,
            }),
            None,
        )
        .expect("context");
        cedar_policy::Request::new(
            uid(format!("Agent::\"{}\"", request.agent)),
            uid("Action::\"call\"".into()),
            uid(format!("Tool::\"{}\"", request.tool)),
            context,
            None,
        )
        .expect("request")
    }

    fn allows(&self, policies: &cedar_policy::PolicySet, request: &cedar_policy::Request) -> bool {
        self.authorizer
            .is_authorized(request, policies, &self.entities)
            .decision()
            == cedar_policy::Decision::Allow
    }

    fn slice(&self, tool: &str) -> &cedar_policy::PolicySet {
        &self.sliced[tool]
    }
}

struct Rego {
    vm: regorus::rvm::vm::RegoVM,
}

/// Rego on regorus's tree-walking engine, for the forms where it beats the RVM.
struct RegoEngine {
    engine: regorus::Engine,
}

impl RegoEngine {
    fn new(policy: String, data: Option<Json>) -> RegoEngine {
        let mut engine = regorus::Engine::new();
        engine
            .add_policy("policy.rego".into(), policy)
            .expect("rego parses");
        if let Some(data) = data {
            engine
                .add_data(regorus::Value::from_json_str(&data.to_string()).expect("data"))
                .expect("data loads");
        }
        RegoEngine { engine }
    }

    fn allows(&mut self, input: &regorus::Value) -> bool {
        self.engine.set_input(input.clone());
        self.engine
            .eval_rule("data.sluice.deny".into())
            .expect("rego runs")
            == regorus::Value::from(false)
    }
}

impl Rego {
    fn new(policy: String, data: Option<Json>) -> Rego {
        let mut engine = regorus::Engine::new();
        engine
            .add_policy("policy.rego".into(), policy)
            .expect("rego parses");
        let entry: regorus::Rc<str> = "data.sluice.deny".into();
        let compiled = engine
            .compile_with_entrypoint(&entry)
            .expect("rego compiles");
        let program = regorus::languages::rego::compiler::Compiler::compile_from_policy(
            &compiled,
            &["data.sluice.deny"],
        )
        .expect("compiles to the RVM");
        let mut vm = regorus::rvm::vm::RegoVM::new();
        vm.load_program(program);
        if let Some(data) = data {
            vm.set_data(regorus::Value::from_json_str(&data.to_string()).expect("data"))
                .expect("data loads");
        }
        Rego { vm }
    }

    fn input(request: &Request) -> regorus::Value {
        regorus::Value::from_json_str(&scenario::input_json(request).to_string()).expect("input")
    }

    fn allows(&mut self, input: &regorus::Value) -> bool {
        self.vm.set_input(input.clone());
        self.vm.execute().expect("rego runs") == regorus::Value::from(false)
    }
}

/// Runs `decide` on the requests round-robin: one decision per iteration.
fn round_robin<T>(items: &[T], mut decide: impl FnMut(&T) -> bool) -> impl FnMut() -> bool {
    let mut next = 0usize;
    move || {
        let item = &items[next % items.len()];
        next += 1;
        decide(black_box(item))
    }
}

fn decisions(c: &mut Criterion) {
    for n in SIZES {
        let rules = scenario::rules(n);
        let requests = scenario::requests(&rules);
        let calls: Vec<Call> = requests.iter().map(sluice_call).collect();
        let program = sluice_program(&rules);
        let jit = Executable::new(program.clone(), Backend::Jit);
        assert_eq!(jit.backend(), Backend::Jit, "{:?}", jit.fallback());
        let interp = Executable::new(program, Backend::Interp);
        let floor = Floor::new(&rules);
        let cedar = Cedar::new(&rules);
        let cedar_requests: Vec<_> = requests.iter().map(Cedar::request).collect();
        let mut rego = Rego::new(scenario::rego(&rules), None);
        let mut rego_data = Rego::new(
            scenario::rego_data_driven(),
            Some(scenario::rego_data(&rules)),
        );
        let inputs: Vec<_> = requests.iter().map(Rego::input).collect();
        let mut rego_engine = RegoEngine::new(scenario::rego(&rules), None);
        let mut rego_data_engine = RegoEngine::new(
            scenario::rego_data_driven(),
            Some(scenario::rego_data(&rules)),
        );

        // Every engine must give every request the same answer before anything is timed.
        let mut denied = 0;
        for (i, call) in calls.iter().enumerate() {
            let expected = floor.allows(call);
            denied += usize::from(!expected);
            let answers = [
                ("sluice-jit", sluice_allows(&jit, call)),
                ("sluice-interp", sluice_allows(&interp, call)),
                ("sluice-jit-evaluate", sluice_evaluates_to_allow(&jit, call)),
                ("cedar", cedar.allows(&cedar.policies, &cedar_requests[i])),
                (
                    "cedar-sliced",
                    cedar.allows(cedar.slice(&call.tool), &cedar_requests[i]),
                ),
                ("rego", rego.allows(&inputs[i])),
                ("rego-data", rego_data.allows(&inputs[i])),
                ("rego-engine", rego_engine.allows(&inputs[i])),
                ("rego-data-engine", rego_data_engine.allows(&inputs[i])),
            ];
            for (engine, answer) in answers {
                assert_eq!(
                    answer, expected,
                    "{engine} disagrees at N={n} on {:?}",
                    requests[i]
                );
            }
        }
        assert!(
            denied > 0 && denied < calls.len(),
            "the mix must hold allowed and denied calls ({denied} of {} denied)",
            calls.len()
        );

        let mut group = c.benchmark_group(format!("decision/{n}"));
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(40);
        group.bench_function("floor", |b| {
            b.iter(round_robin(&calls, |c| floor.allows(c)))
        });
        group.bench_function("sluice-jit", |b| {
            b.iter(round_robin(&calls, |c| sluice_allows(&jit, c)))
        });
        group.bench_function("sluice-interp", |b| {
            b.iter(round_robin(&calls, |c| sluice_allows(&interp, c)))
        });
        group.bench_function("sluice-jit-evaluate", |b| {
            b.iter(round_robin(&calls, |c| sluice_evaluates_to_allow(&jit, c)))
        });
        let cedar_pairs: Vec<_> = cedar_requests.iter().zip(&calls).collect();
        group.bench_function("cedar", |b| {
            b.iter(round_robin(&cedar_pairs, |(r, _)| {
                cedar.allows(&cedar.policies, r)
            }))
        });
        group.bench_function("cedar-sliced", |b| {
            b.iter(round_robin(&cedar_pairs, |(r, call)| {
                cedar.allows(cedar.slice(&call.tool), r)
            }))
        });
        group.bench_function("cedar-request-construction", |b| {
            b.iter(round_robin(&requests, |r| {
                black_box(Cedar::request(r));
                true
            }))
        });
        group.bench_function("rego", |b| {
            b.iter(round_robin(&inputs, |input| rego.allows(input)))
        });
        group.bench_function("rego-data", |b| {
            b.iter(round_robin(&inputs, |input| rego_data.allows(input)))
        });
        group.bench_function("rego-engine", |b| {
            b.iter(round_robin(&inputs, |input| rego_engine.allows(input)))
        });
        group.bench_function("rego-data-engine", |b| {
            b.iter(round_robin(&inputs, |input| rego_data_engine.allows(input)))
        });
        group.finish();
    }
}

fn load(c: &mut Criterion) {
    let n = 1000;
    let rules = scenario::rules(n);
    let mut group = c.benchmark_group(format!("load/{n}"));
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4))
        .sample_size(10);
    let text = scenario::sluice(&rules);
    group.bench_with_input(BenchmarkId::new("sluice-jit", n), &text, |b, text| {
        b.iter(|| {
            let compiled = Database::default()
                .compile_texts("bench", vec![("bench.sluice".into(), text.clone())]);
            let executable = Executable::new(compiled.program.expect("program"), Backend::Jit);
            black_box(executable.backend())
        })
    });
    group.bench_with_input(BenchmarkId::new("sluice-interp", n), &text, |b, text| {
        b.iter(|| {
            let compiled = Database::default()
                .compile_texts("bench", vec![("bench.sluice".into(), text.clone())]);
            black_box(compiled.program.expect("program"))
        })
    });
    let cedar = scenario::cedar(&rules);
    group.bench_with_input(BenchmarkId::new("cedar", n), &cedar, |b, text| {
        b.iter(|| black_box(text.parse::<cedar_policy::PolicySet>().expect("parses")))
    });
    let rego = scenario::rego(&rules);
    group.bench_with_input(BenchmarkId::new("rego", n), &rego, |b, text| {
        b.iter(|| black_box(Rego::new(text.clone(), None).vm.execute().is_ok()))
    });
    group.finish();
}

criterion_group!(benches, decisions, load);
criterion_main!(benches);
