//! One session with a client: the protocol's lifecycle (`initialize`,
//! `shutdown`, `exit`), the documents' notifications and the requests, on
//! one thread. An edit re-analyses its file at once (after a short pause
//! that gathers a burst of keystrokes) and merges it with the rest of the
//! project; the whole workspace is analysed again on another thread when a
//! file on disk changes (saved, created, deleted: imports, launch scripts,
//! setup.py/pyproject), and the configuration is read again when a
//! configuration file changes.

use super::actions::{self, FIX_ALL};
use super::analysis::{self, Config, ConfigProblem, Overrides, Pass, Project, Reports, Stored};
use super::diagnostics::{self, Context};
use super::documents::Document;
use super::hover;
use super::positions::Units;
use super::settings::ClientSettings;
use super::transport::{Incoming, Transport};
use crossbeam_channel::{after, never, select, Receiver, Sender};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionParams, CodeActionProviderCapability, Diagnostic,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidChangeWatchedFilesRegistrationOptions,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams, FileSystemWatcher, GlobPattern,
    HoverParams, HoverProviderCapability, InitializeParams, Location, MessageType, Position, PublishDiagnosticsParams,
    Range, Registration, RegistrationParams, SaveOptions, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Url,
};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long edits are gathered before the analysis runs; every change
/// already received is taken in too, so a burst of keystrokes that arrives
/// while an analysis runs is analysed once after it.
const DEBOUNCE: Duration = Duration::from_millis(5);

/// A merge of the workspace that took longer than this moves the next ones
/// off the session's thread, so that it keeps answering while they run.
const SLOW_MERGE: Duration = Duration::from_millis(40);

/// How long changes on disk are gathered before the workspace is analysed
/// again (a `git checkout` changes many files at once).
const REFRESH_DELAY: Duration = Duration::from_millis(300);

/// The files whose change is a change of configuration.
const CONFIG_FILES: [&str; 3] = ["pyproject.toml", "npu-mem.toml", ".npu-mem.toml"];

/// The files the client is asked to watch: the ones the scan reads, and
/// the ones that feed project facts (project markers, launch documents).
const WATCHED: [&str; 6] = [
    "**/*.{py,pyi,sh,bash,ipynb}",
    "**/{pyproject.toml,npu-mem.toml,.npu-mem.toml,setup.py,setup.cfg}",
    "**/{requirements*,*-requirements,*_requirements}.txt",
    "**/{README,readme,Readme}*",
    "**/Makefile",
    "**/*.{yml,yaml}",
];

/// How the session ended: the exit code the protocol asks for.
pub(super) fn run(transport: Transport) -> u8 {
    let Transport { sender, receiver } = transport;
    let mut session = Session::new(sender);
    loop {
        let due = session.next_due();
        let wait = due.map_or(never(), |at| after(at.saturating_duration_since(Instant::now())));
        let pass = session.workspace.pending.clone().unwrap_or_else(never);
        let merged = session.merging.pending.clone().unwrap_or_else(never);
        select! {
            recv(receiver) -> incoming => match incoming {
                Ok(incoming) => {
                    if let Some(code) = session.handle(incoming) {
                        return code;
                    }
                }
                // Input ended without `exit`.
                Err(_) => return 1,
            },
            recv(pass) -> result => session.pass_done(result.ok()),
            recv(merged) -> result => session.merge_done(result.ok()),
            recv(wait) -> _ => {
                // What the client sent meanwhile comes first: its edits join this analysis.
                while let Ok(incoming) = receiver.try_recv() {
                    if let Some(code) = session.handle(incoming) {
                        return code;
                    }
                }
                session.run_due();
            }
        }
    }
}

/// Where the session is in the protocol's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Before `initialize`: requests are refused.
    Uninitialized,
    /// Serving.
    Running,
    /// After `shutdown`: only `exit` is expected.
    ShutDown,
}

/// What the client can take.
#[derive(Debug, Default, Clone, Copy)]
struct ClientCaps {
    /// Edits bound to a document version (`documentChanges`).
    versioned_edits: bool,
    /// Registering file watchers from the server.
    watch_files: bool,
}

/// What a workspace pass gives back: the configuration it used, and its result.
type PassResult = (Arc<Config>, Result<Pass, ConfigProblem>);

/// What a merge on another thread gives back: the project it is of (its
/// generation), each document's version in it, the reports, and how long it took.
type MergeResult = (u64, HashMap<Url, i32>, Reports, Duration);

/// Merges of the workspace run off the session's thread once they are slow.
#[derive(Default)]
struct Merging {
    /// The merge under way.
    pending: Option<Receiver<MergeResult>>,
    /// Another merge is wanted once the one under way is done.
    again: bool,
    /// How long the last merge took.
    last: Duration,
}

/// The analysis of the whole workspace and the passes that renew it.
#[derive(Default)]
struct Workspace {
    /// The last pass's project, kept up to date edit by edit.
    project: Option<Project>,
    /// Counts the projects installed, so that a merge of an older one is dropped.
    generation: u64,
    /// The pass under way, with the configuration it uses.
    pending: Option<Receiver<PassResult>>,
    /// Another pass is wanted once the one under way is done.
    again: bool,
    /// When a pass is due.
    due: Option<Instant>,
}

struct Session {
    sender: Sender<Message>,
    stage: Stage,
    units: Units,
    caps: ClientCaps,
    root: PathBuf,
    client: ClientSettings,
    /// The configuration in use (the last one that loaded).
    config: Option<Arc<Config>>,
    /// The diagnostic published for a configuration that does not load, and where.
    config_problem: Option<Url>,
    /// Rule code -> its documentation page.
    docs: HashMap<String, Url>,
    documents: HashMap<Url, Document>,
    workspace: Workspace,
    merging: Merging,
    /// Projects of one open file each, for files outside the workspace (or not in it yet).
    lone: HashMap<Url, Project>,
    /// What was last published per document.
    published: HashMap<Url, Vec<Diagnostic>>,
    /// Documents changed since their last analysis, and when to analyse them.
    dirty: BTreeSet<Url>,
    dirty_due: Option<Instant>,
    next_request: i32,
}

impl Session {
    fn new(sender: Sender<Message>) -> Session {
        Session {
            sender,
            stage: Stage::Uninitialized,
            units: Units::Utf16,
            caps: ClientCaps::default(),
            root: PathBuf::from("."),
            client: ClientSettings::read(None).0,
            config: None,
            config_problem: None,
            docs: HashMap::new(),
            documents: HashMap::new(),
            workspace: Workspace::default(),
            merging: Merging::default(),
            lone: HashMap::new(),
            published: HashMap::new(),
            dirty: BTreeSet::new(),
            dirty_due: None,
            next_request: 0,
        }
    }

    /// The earliest time something is due.
    fn next_due(&self) -> Option<Instant> {
        [self.dirty_due, self.workspace.due].into_iter().flatten().min()
    }

    fn send(&self, message: impl Into<Message>) {
        // A client gone away is seen as the end of its input.
        let _ = self.sender.send(message.into());
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_string(), params));
    }

    fn log(&self, typ: MessageType, message: String) {
        self.notify::<lsp_types::notification::LogMessage>(lsp_types::LogMessageParams { typ, message });
    }

    /// Handles what the client sent; the exit code once the session ends.
    fn handle(&mut self, incoming: Incoming) -> Option<u8> {
        match incoming {
            Incoming::Malformed(problem) => {
                self.log(MessageType::ERROR, format!("npu-mem server: read {problem}"));
                None
            }
            Incoming::Message { message, lossy } => {
                if lossy {
                    self.log(
                        MessageType::WARNING,
                        "npu-mem server: a message held bytes that are not UTF-8; they were read as U+FFFD".into(),
                    );
                }
                match message {
                    Message::Request(req) => {
                        self.request(req);
                        None
                    }
                    Message::Notification(n) if n.method == "exit" => Some(u8::from(self.stage != Stage::ShutDown)),
                    Message::Notification(n) => {
                        if self.stage == Stage::Running {
                            self.notification(n);
                        }
                        None
                    }
                    // Answers to the server's own requests (the file watchers' registration).
                    Message::Response(_) => None,
                }
            }
        }
    }

    fn request(&mut self, req: Request) {
        if self.stage == Stage::Running {
            self.settle();
        }
        let refuse = |code: ErrorCode, message: &str| Response::new_err(req.id.clone(), code as i32, message.into());
        let response = match (self.stage, req.method.as_str()) {
            (Stage::Uninitialized, "initialize") => self.initialize(req.id.clone(), req.params),
            (Stage::Uninitialized, _) => refuse(ErrorCode::ServerNotInitialized, "send `initialize` first"),
            (Stage::ShutDown, _) => refuse(ErrorCode::InvalidRequest, "the server is shut down; send `exit`"),
            (Stage::Running, "initialize") => refuse(ErrorCode::InvalidRequest, "already initialized"),
            (Stage::Running, "shutdown") => {
                self.stage = Stage::ShutDown;
                Response::new_ok(req.id.clone(), ())
            }
            (Stage::Running, lsp_types::request::HoverRequest::METHOD) => {
                match serde_json::from_value::<HoverParams>(req.params) {
                    Ok(params) => Response::new_ok(req.id.clone(), self.hover(params)),
                    Err(e) => refuse(ErrorCode::InvalidParams, &e.to_string()),
                }
            }
            (Stage::Running, lsp_types::request::CodeActionRequest::METHOD) => {
                match serde_json::from_value::<CodeActionParams>(req.params) {
                    Ok(params) => Response::new_ok(req.id.clone(), self.code_actions(params)),
                    Err(e) => refuse(ErrorCode::InvalidParams, &e.to_string()),
                }
            }
            (Stage::Running, method) => refuse(ErrorCode::MethodNotFound, &format!("npu-mem does not answer {method}")),
        };
        self.send(response);
    }

    /// `initialize`: the root, the units of positions, the client's settings; the server's capabilities.
    fn initialize(&mut self, id: RequestId, params: serde_json::Value) -> Response {
        let root = ["workspaceFolders", "rootUri"]
            .iter()
            .find_map(|key| {
                let value = &params[key];
                let uri = if value.is_array() { &value[0]["uri"] } else { value };
                Url::parse(uri.as_str()?).ok()?.to_file_path().ok()
            })
            .or_else(|| params["rootPath"].as_str().map(PathBuf::from));
        let init: InitializeParams = match serde_json::from_value(params) {
            Ok(init) => init,
            Err(e) => return Response::new_err(id, ErrorCode::InvalidParams as i32, format!("initialize: {e}")),
        };
        let caps = &init.capabilities;
        self.units = Units::negotiate(caps.general.as_ref().and_then(|g| g.position_encodings.as_deref()));
        let workspace = caps.workspace.as_ref();
        self.caps = ClientCaps {
            versioned_edits: workspace.and_then(|w| w.workspace_edit.as_ref()?.document_changes).unwrap_or(false),
            watch_files: workspace.and_then(|w| w.did_change_watched_files?.dynamic_registration).unwrap_or(false),
        };
        let (client, problem) = ClientSettings::read(init.initialization_options);
        self.client = client;
        if let Some(problem) = problem {
            self.log(MessageType::WARNING, problem);
        }
        // Paths are shown, and globs read, relative to the workspace, as `scan` run there does.
        self.root = root.map_or_else(|| PathBuf::from("."), |r| analysis::absolute(&r));
        if std::env::set_current_dir(&self.root).is_err() {
            self.log(MessageType::WARNING, format!("npu-mem server: cannot enter {}", self.root.display()));
        }
        self.stage = Stage::Running;
        let capabilities = ServerCapabilities {
            position_encoding: Some(self.units.kind()),
            text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
                ..TextDocumentSyncOptions::default()
            })),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::new(FIX_ALL)]),
                ..CodeActionOptions::default()
            })),
            ..ServerCapabilities::default()
        };
        let result = serde_json::json!({
            "capabilities": capabilities,
            "serverInfo": { "name": "npu-mem", "version": env!("CARGO_PKG_VERSION") },
        });
        self.load_config();
        Response::new_ok(id, result)
    }

    fn notification(&mut self, n: Notification) {
        use lsp_types::notification as note;
        match n.method.as_str() {
            note::Initialized::METHOD => self.register_watchers(),
            note::DidOpenTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value::<DidOpenTextDocumentParams>(n.params) {
                    let doc = p.text_document;
                    if let Some(path) = path_of(&doc.uri) {
                        self.documents.insert(doc.uri.clone(), Document::new(path, doc.version, doc.text));
                        self.touch(doc.uri);
                    }
                }
            }
            note::DidChangeTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value::<DidChangeTextDocumentParams>(n.params) {
                    let uri = p.text_document.uri;
                    if let Some(doc) = self.documents.get_mut(&uri) {
                        doc.change(p.text_document.version, p.content_changes, self.units);
                        self.touch(uri);
                    }
                }
            }
            note::DidSaveTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value::<DidSaveTextDocumentParams>(n.params) {
                    self.changed_on_disk(path_of(&p.text_document.uri).as_deref());
                }
            }
            note::DidCloseTextDocument::METHOD => {
                if let Ok(p) = serde_json::from_value::<DidCloseTextDocumentParams>(n.params) {
                    let uri = p.text_document.uri;
                    if let Some(doc) = self.documents.remove(&uri) {
                        self.lone.remove(&uri);
                        self.dirty.remove(&uri);
                        self.publish(&uri, Vec::new(), None);
                        // The file on disk stands for itself again.
                        self.changed_on_disk(Some(&doc.path));
                    }
                }
            }
            note::DidChangeWatchedFiles::METHOD => {
                if let Ok(p) = serde_json::from_value::<DidChangeWatchedFilesParams>(n.params) {
                    for change in p.changes {
                        self.changed_on_disk(path_of(&change.uri).as_deref());
                    }
                }
            }
            _ => {}
        }
    }

    /// Asks the client to tell the server when files that feed project facts change.
    fn register_watchers(&mut self) {
        if !self.caps.watch_files {
            return;
        }
        let watchers = WATCHED
            .iter()
            .map(|glob| FileSystemWatcher { glob_pattern: GlobPattern::String(glob.to_string()), kind: None })
            .collect();
        let options = DidChangeWatchedFilesRegistrationOptions { watchers };
        let registration = Registration {
            id: "npu-mem-watched-files".into(),
            method: lsp_types::notification::DidChangeWatchedFiles::METHOD.into(),
            register_options: serde_json::to_value(options).ok(),
        };
        self.next_request += 1;
        let params = RegistrationParams { registrations: vec![registration] };
        let method = lsp_types::request::RegisterCapability::METHOD.to_string();
        self.send(Request::new(RequestId::from(self.next_request), method, params));
    }

    /// Marks a document as edited: it is analysed once the edits pause.
    fn touch(&mut self, uri: Url) {
        self.dirty.insert(uri);
        self.dirty_due = Some(Instant::now() + DEBOUNCE);
    }

    /// A file changed on disk (or stopped standing for an open buffer): a
    /// configuration file is read again; any other file, the workspace is
    /// analysed again.
    fn changed_on_disk(&mut self, path: Option<&Path>) {
        let name = path.and_then(|p| p.file_name()).and_then(|n| n.to_str()).unwrap_or("");
        let config = self.config.as_ref().and_then(|c| c.file().map(Path::to_path_buf));
        if CONFIG_FILES.contains(&name) || path.is_some_and(|p| config.as_deref() == Some(p)) {
            self.load_config();
        } else {
            self.workspace.due = Some(Instant::now() + REFRESH_DELAY);
        }
    }

    /// Reads the configuration; on a problem, says where and keeps the last
    /// one that loaded (or the defaults).
    fn load_config(&mut self) {
        let overrides = self.client.overrides.clone();
        let loaded = Config::load(&self.root, &overrides, true).map_err(|problem| {
            // The configuration without the file, and then without the client's overrides.
            let fallback = Config::load(&self.root, &overrides, false)
                .or_else(|_| Config::load(&self.root, &Overrides::default(), false));
            (problem, fallback)
        });
        let config = match loaded {
            Ok(config) => {
                self.clear_config_problem();
                Some(config)
            }
            Err((problem, fallback)) => {
                self.show_config_problem(&problem);
                match (&self.config, fallback) {
                    (Some(_), _) => None,
                    (None, fallback) => fallback.ok(),
                }
            }
        };
        if let Some(config) = config {
            self.docs = super::docs::pages(&config);
            self.config = Some(Arc::new(config));
            // Another configuration re-uses nothing of the last pass.
            self.workspace.project = None;
            self.workspace.generation += 1;
            self.lone.clear();
            self.start_pass();
        }
    }

    fn clear_config_problem(&mut self) {
        if let Some(uri) = self.config_problem.take() {
            self.publish(&uri, Vec::new(), None);
        }
    }

    /// Publishes a configuration problem on its file, or logs it when no file is at fault.
    fn show_config_problem(&mut self, problem: &ConfigProblem) {
        self.clear_config_problem();
        match problem.path.as_deref().and_then(|p| Url::from_file_path(analysis::absolute(p)).ok()) {
            Some(uri) => {
                let diagnostic = diagnostics::of_config(&problem.message, problem.line);
                self.publish(&uri, vec![diagnostic], None);
                self.config_problem = Some(uri);
            }
            None => {
                let message = format!("npu-mem: {}", problem.message);
                self.notify::<lsp_types::notification::ShowMessage>(lsp_types::ShowMessageParams {
                    typ: MessageType::ERROR,
                    message,
                });
            }
        }
    }

    /// Starts a pass over the whole workspace on another thread (or asks
    /// for one after the pass under way).
    fn start_pass(&mut self) {
        self.workspace.due = None;
        if self.workspace.pending.is_some() {
            self.workspace.again = true;
            return;
        }
        let Some(config) = self.config.clone() else { return };
        let texts = self.documents.values().map(|d| (d.path.clone(), d.text.clone())).collect();
        let stored: Option<Stored> = self.workspace.project.as_mut().map(Project::take_stored);
        let root = self.root.clone();
        let (done, pending) = crossbeam_channel::bounded(1);
        let spawned = std::thread::Builder::new().name("npu-mem-workspace".into()).spawn(move || {
            let result = analysis::analyse_workspace(&config, &root, texts, stored);
            let _ = done.send((config, result));
        });
        match spawned {
            Ok(_) => self.workspace.pending = Some(pending),
            Err(e) => self.log(MessageType::ERROR, format!("npu-mem server: cannot start the workspace analysis: {e}")),
        }
    }

    /// A pass is done (`None`: its thread ended without a result).
    fn pass_done(&mut self, result: Option<PassResult>) {
        self.workspace.pending = None;
        let current = |config: &Arc<Config>| self.config.as_ref().is_some_and(|c| Arc::ptr_eq(c, config));
        match result {
            Some((config, Ok(pass))) if current(&config) => {
                let analysed = pass.texts.clone();
                let mut project = Project::new(config, pass);
                // Buffers edited while the pass ran are analysed as they are now.
                for doc in self.documents.values_mut() {
                    if project.has(&doc.path) {
                        if analysed.get(&doc.path) != Some(&doc.text) {
                            doc.tree = project.edit(&doc.path, &doc.text, None);
                        }
                        doc.analysed = Some(doc.version);
                    }
                }
                self.lone.retain(|uri, _| path_of(uri).is_none_or(|p| !project.has(&p)));
                self.workspace.project = Some(project);
                self.workspace.generation += 1;
                self.merging.last = Duration::ZERO;
                self.merge_workspace();
                // Edits that waited for the first pass (or are not in it) are analysed now.
                if !self.dirty.is_empty() {
                    self.dirty_due = Some(Instant::now());
                }
            }
            Some((config, Err(problem))) if current(&config) => self.show_config_problem(&problem),
            Some(_) => self.workspace.again = true,
            None => self.log(MessageType::ERROR, "npu-mem server: the workspace analysis stopped".into()),
        }
        if std::mem::take(&mut self.workspace.again) {
            self.start_pass();
        }
    }

    /// Runs what is due: the analysis of edited documents, a workspace pass.
    fn run_due(&mut self) {
        let now = Instant::now();
        if self.workspace.due.is_some_and(|at| at <= now) {
            self.start_pass();
        }
        if self.dirty_due.is_some_and(|at| at <= now) {
            self.analyse_edits();
        }
    }

    /// Analyses the edited documents and publishes the diagnostics that changed.
    fn analyse_edits(&mut self) {
        // Until the first pass is in, edits wait for it (it reads the buffers as they are then).
        let (Some(config), Some(_)) = (self.config.clone(), &self.workspace.project) else {
            self.dirty_due = None;
            return;
        };
        self.dirty_due = None;
        let mut merge = false;
        for uri in std::mem::take(&mut self.dirty) {
            let Some(doc) = self.documents.get_mut(&uri) else { continue };
            if config.kind_of(&doc.path).is_none() {
                continue;
            }
            let project = self.workspace.project.as_mut().filter(|p| p.has(&doc.path));
            match project {
                Some(project) => {
                    doc.tree = project.edit(&doc.path, &doc.text, doc.tree.as_ref());
                    doc.analysed = Some(doc.version);
                    merge = true;
                }
                None => {
                    // Not in the workspace's walk: a file of its own meanwhile, and a new file in
                    // the workspace joins it with the next pass.
                    if doc.path.starts_with(&self.root) {
                        self.workspace.due.get_or_insert(Instant::now() + REFRESH_DELAY);
                    }
                    match Project::lone(config.clone(), &doc.path, doc.text.clone()) {
                        Ok(mut project) => {
                            project.merge();
                            doc.reported = Some(doc.version);
                            self.lone.insert(uri, project);
                        }
                        Err(problem) => self.log(MessageType::ERROR, format!("npu-mem server: {}", problem.message)),
                    }
                }
            }
        }
        if merge {
            self.merge_workspace();
        }
        self.publish_all();
    }

    /// Analyses the edits not analysed yet and waits for the merge under
    /// way: answers are about the documents as they are now.
    fn settle(&mut self) {
        if !self.dirty.is_empty() {
            self.analyse_edits();
        }
        while let Some(pending) = self.merging.pending.clone() {
            self.merge_done(pending.recv().ok());
        }
    }

    /// Merges the workspace's analyses and publishes what changed; on this
    /// thread while merges are quick, else on another (one at a time).
    fn merge_workspace(&mut self) {
        let Some(project) = self.workspace.project.as_mut() else { return };
        let versions: HashMap<Url, i32> = self
            .documents
            .iter()
            .filter_map(|(uri, d)| Some((uri.clone(), d.analysed?)))
            .filter(|(uri, _)| !self.lone.contains_key(uri))
            .collect();
        if self.merging.last < SLOW_MERGE {
            let started = Instant::now();
            let reports = project.snapshot().merge();
            self.install_reports(self.workspace.generation, versions, reports, started.elapsed());
            return;
        }
        if self.merging.pending.is_some() {
            self.merging.again = true;
            return;
        }
        let (snapshot, generation) = (project.snapshot(), self.workspace.generation);
        let (done, pending) = crossbeam_channel::bounded(1);
        let spawned = std::thread::Builder::new().name("npu-mem-merge".into()).spawn(move || {
            let started = Instant::now();
            let reports = snapshot.merge();
            let _ = done.send((generation, versions, reports, started.elapsed()));
        });
        match spawned {
            Ok(_) => self.merging.pending = Some(pending),
            Err(e) => self.log(MessageType::ERROR, format!("npu-mem server: cannot start a merge: {e}")),
        }
    }

    /// A merge on another thread is done (`None`: its thread ended without a result).
    fn merge_done(&mut self, result: Option<MergeResult>) {
        self.merging.pending = None;
        match result {
            Some((generation, versions, reports, took)) => self.install_reports(generation, versions, reports, took),
            None => self.log(MessageType::ERROR, "npu-mem server: a merge stopped".into()),
        }
        if std::mem::take(&mut self.merging.again) {
            self.merge_workspace();
        }
    }

    /// Takes a merge's reports, if they are of the current project, and publishes what changed.
    fn install_reports(&mut self, generation: u64, versions: HashMap<Url, i32>, reports: Reports, took: Duration) {
        let Some(project) = self.workspace.project.as_mut().filter(|_| generation == self.workspace.generation) else {
            return;
        };
        project.set_reports(reports);
        self.merging.last = took;
        for (uri, version) in versions {
            if let Some(doc) = self.documents.get_mut(&uri) {
                doc.reported = Some(version);
            }
        }
        self.publish_all();
    }

    /// The project that has the document at `uri`.
    fn project_of(&self, uri: &Url, path: &Path) -> Option<&Project> {
        self.lone.get(uri).or(self.workspace.project.as_ref().filter(|p| p.has(path)))
    }

    /// Publishes every open document's diagnostics that changed.
    fn publish_all(&mut self) {
        let mut out = Vec::new();
        for (uri, doc) in &self.documents {
            // Diagnostics of an older text would be at the wrong places: they wait for the merge.
            if doc.reported != Some(doc.version) {
                continue;
            }
            let Some(project) = self.project_of(uri, &doc.path) else { continue };
            let report = project.report(&doc.path);
            let migration_site = report.migration_site.as_ref().and_then(|(path, line)| {
                let at = Position { line: u32::try_from(line.saturating_sub(1)).ok()?, character: 0 };
                Some(Location { uri: Url::from_file_path(path).ok()?, range: Range { start: at, end: at } })
            });
            let cx = Context { doc, uri, units: self.units, docs: &self.docs, migration_site };
            let mut diagnostics: Vec<Diagnostic> =
                report.findings.iter().map(|f| diagnostics::of_finding(f, &cx)).collect();
            diagnostics.extend(report.problem.as_ref().and_then(diagnostics::of_problem));
            out.push((uri.clone(), diagnostics, doc.version));
        }
        for (uri, diagnostics, version) in out {
            if self.published.get(&uri) != Some(&diagnostics) {
                self.publish(&uri, diagnostics, Some(version));
            }
        }
    }

    fn publish(&mut self, uri: &Url, diagnostics: Vec<Diagnostic>, version: Option<i32>) {
        self.published.insert(uri.clone(), diagnostics.clone());
        let params = PublishDiagnosticsParams { uri: uri.clone(), diagnostics, version };
        self.notify::<lsp_types::notification::PublishDiagnostics>(params);
    }

    fn hover(&self, params: HoverParams) -> Option<lsp_types::Hover> {
        let at = params.text_document_position_params;
        let doc = self.documents.get(&at.text_document.uri)?;
        let project = self.project_of(&at.text_document.uri, &doc.path)?;
        let report = project.report(&doc.path);
        hover::hover(doc, &report.findings, at.position, self.units, project.config())
    }

    fn code_actions(&self, params: CodeActionParams) -> Vec<lsp_types::CodeActionOrCommand> {
        let uri = &params.text_document.uri;
        let Some(doc) = self.documents.get(uri) else { return Vec::new() };
        let Some(project) = self.project_of(uri, &doc.path) else { return Vec::new() };
        let request = actions::Request {
            uri,
            doc,
            kind: project.config().kind_of(&doc.path),
            range: params.range,
            diagnostics: &params.context.diagnostics,
            only: params.context.only.as_deref(),
            units: self.units,
            versioned: self.caps.versioned_edits,
            ignore_reason: &self.client.ignore_reason,
        };
        actions::actions(&request, project, &project.report(&doc.path).findings)
    }
}

/// The file a `file:` URI names, made absolute as the walk's paths are.
fn path_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path().ok().map(|p| analysis::absolute(&p))
}
