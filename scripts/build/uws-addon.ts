// Compiles the uWebSockets.js native addon from the sources vendored in
// third_party/uWebSockets.js (see NOTES.md there) against the headers of the pinned
// node package, the same node the executable is made from.
//
// No prebuilt addon on npm fits: the ones for Node 22/24 need glibc 2.38, and our
// hosts (Debian 12) have 2.36. TLS goes through the OpenSSL the node binary exports
// (no BoringSSL), libuv and zlib likewise; QUIC is left out (no lsquic).
//
// The result is cached by a hash of everything that goes into it (archives, source
// edits, compiler flags and version, node headers), so a repeated build skips the
// ~22 s compile.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

export interface UwsArchive {
  name: string
  file: string
  sha256: string
  /** The single directory the archive unpacks into. */
  topDir: string
  /** Where it goes in the binding's tree, relative to its root. */
  extractTo: string
}

export interface UwsSources {
  /** What /v1/system/info and --version report. */
  version: string
  archives: UwsArchive[]
}

export const UWS_SOURCE_DIR = path.join('third_party', 'uWebSockets.js')

export function readUwsSources(root: string): UwsSources {
  return JSON.parse(fs.readFileSync(path.join(root, UWS_SOURCE_DIR, 'sources.json'), 'utf8')) as UwsSources
}

interface SourceEdit {
  /** Relative to the binding's root (uWebSockets/ and uWebSockets/uSockets/ inside). */
  file: string
  find: string
  replace: string
}

/**
 * Every change made to the vendored sources; NOTES.md explains each one. An edit
 * whose text is not found exactly once fails the build, so a source update cannot
 * silently drop one.
 */
const SOURCE_EDITS: SourceEdit[] = [
  // 1. No QUIC: drop the H3App export and the HTTP/3 request and response templates.
  {
    file: 'src/addon.cpp',
    find: '    /* H3 experimental */\n    exports->Set(isolate->GetCurrentContext(), String::NewFromUtf8(isolate, "H3App", NewStringType::kNormal).ToLocalChecked(), FunctionTemplate::New(isolate, uWS_App<uWS::H3App>, externalPerContextData)->GetFunction(isolate->GetCurrentContext()).ToLocalChecked()).ToChecked();\n',
    replace: '',
  },
  {
    file: 'src/addon.cpp',
    find: '    perContextData->reqTemplate[1].Reset(isolate, HttpRequestWrapper::init<true>(isolate));\n',
    replace: '',
  },
  {
    file: 'src/addon.cpp',
    find: '    perContextData->resTemplate[2].Reset(isolate, HttpResponseWrapper::init<2>(isolate));\n',
    replace: '',
  },
  // 2. Node's published headers lack v8-fast-api-calls.h: drop the include and the two
  //    fast-call definitions that need it (their registration is commented out upstream).
  { file: 'src/WebSocketWrapper.h', find: '#include "v8-fast-api-calls.h"\n', replace: '' },
  {
    file: 'src/WebSocketWrapper.h',
    find: `// Version A: Handles Strings
template <bool SSL>
static uint32_t uWS_WebSocket_send_fast_string(v8::Local<v8::Object> receiver, 
                                               const v8::FastOneByteString& message, 
                                               bool isBinary, bool compress) {
    auto *ws = (uWS::WebSocket<SSL, true, PerSocketData> *) getInternalPointer(receiver);//->GetAlignedPointerFromInternalField(0);
    if (!ws) return 0;
    return ws->send(std::string_view(message.data, message.length),
                    isBinary ? uWS::OpCode::BINARY : uWS::OpCode::TEXT, compress);
}
`,
    replace: '',
  },
  {
    file: 'src/WebSocketWrapper.h',
    find: '        static v8::CFunction fast_send = v8::CFunction::Make(uWS_WebSocket_send_fast_buffer<SSL>);\n',
    replace: '',
  },
  // 3. HTTP/1.0 is served (health checkers send it), without Host, and the connection
  //    closes after the response (the existing isAncient() path does that).
  {
    file: 'uWebSockets/src/HttpParser.h',
    find: '                        if (memcmp(" HTTP/1.1\\r\\n", data, std::min<unsigned int>(11, (unsigned int) (end - data))) == 0) {',
    replace:
      '                        unsigned int available = std::min<unsigned int>(11, (unsigned int) (end - data));\n' +
      '                        if (memcmp(" HTTP/1.1\\r\\n", data, available) == 0 || memcmp(" HTTP/1.0\\r\\n", data, available) == 0) {',
  },
  {
    file: 'uWebSockets/src/HttpParser.h',
    find: '                    if (memcmp(" HTTP/1.1\\r\\n", data, 11) == 0) {',
    replace:
      '                    if (memcmp(" HTTP/1.1\\r\\n", data, 11) == 0 || memcmp(" HTTP/1.0\\r\\n", data, 11) == 0) {',
  },
  {
    // Upstream expects at least one header line after the request line; HTTP/1.0 needs none.
    file: 'uWebSockets/src/HttpParser.h',
    find: '        headers++;\n\n        for (unsigned int i = 1; i < UWS_HTTP_MAX_HEADERS_COUNT - 1; i++) {\n',
    replace:
      '        headers++;\n\n' +
      '        /* No header fields at all: valid for HTTP/1.0 (HTTP/1.1 then fails the Host check) */\n' +
      "        if (postPaddedBuffer[0] == '\\r' && postPaddedBuffer[1] == '\\n') {\n" +
      '            headers->key = std::string_view(nullptr, 0);\n' +
      '            return (unsigned int) ((postPaddedBuffer + 2) - start);\n' +
      '        }\n\n' +
      '        for (unsigned int i = 1; i < UWS_HTTP_MAX_HEADERS_COUNT - 1; i++) {\n',
  },
  {
    file: 'uWebSockets/src/HttpParser.h',
    find: '            req->ancientHttp = false;\n',
    replace:
      '            /* The request line ended in " HTTP/1.0" or " HTTP/1.1"; the minor digit follows " HTTP/1." */\n' +
      "            req->ancientHttp = req->headers->value.data()[req->headers->value.length() + 8] == '0';\n",
  },
  {
    file: 'uWebSockets/src/HttpParser.h',
    find: '            if (!req->getHeader("host").data()) {',
    replace: '            if (!req->getHeader("host").data() && !req->ancientHttp) {',
  },
  // 4. Any other request line we do not serve (target "*", an absolute URI, another
  //    version) is a 400 rather than "505 HTTP Version Not Supported".
  {
    file: 'uWebSockets/src/HttpParser.h',
    find: '            err = postPaddedBuffer ? HTTP_ERROR_505_HTTP_VERSION_NOT_SUPPORTED : 0;',
    replace: '            err = postPaddedBuffer ? HTTP_ERROR_400_BAD_REQUEST : 0;',
  },
  // 5. A repeated Host or Content-Length is refused (RFC 9112 6.3 allows refusing a
  //    repeated Content-Length; differing values are a request-smuggling vector). Upstream
  //    checks only Host and asks getHeader(), which finds the header itself whenever the
  //    bloom filter gives a false positive (likely with dozens of headers), so a single
  //    Host after many other headers got a 400. Compare with the earlier headers instead.
  {
    file: 'uWebSockets/src/HttpParser.h',
    find: '                    if (h->key == "host" && req->getHeader("host").data()) {\n                        return {HTTP_ERROR_400_BAD_REQUEST, FULLPTR};\n                    }\n',
    replace:
      '                    if (h->key == "host" || h->key == "content-length") {\n' +
      '                        for (HttpRequest::Header *earlier = req->headers + 1; earlier != h; earlier++) {\n' +
      '                            if (earlier->key == h->key) {\n' +
      '                                return {HTTP_ERROR_400_BAD_REQUEST, FULLPTR};\n' +
      '                            }\n' +
      '                        }\n' +
      '                    }\n',
  },
  // 6. Pipelined requests behind a pending (asynchronous) response are answered in order.
  //    Upstream closes the connection when it parses a request while the
  //    previous response is pending. Instead the parser stops at that request; its bytes and all
  //    read after them are held (bounded by maxHeldPipelineSize(), beyond which the connection
  //    closes) and parsed on the loop iteration after the pending response ends.
  {
    file: 'uWebSockets/src/HttpParser.h',
    find: 'private:\n    std::string fallback;\n',
    replace:
      '    /* memsvc: protected, so that HttpContext can take over a request held in it */\nprotected:\n    std::string fallback;\nprivate:\n',
  },
  {
    file: 'uWebSockets/src/HttpResponseData.h',
    find: '#include "MoveOnlyFunction.h"\n\nnamespace uWS {\n',
    replace: '#include "MoveOnlyFunction.h"\n\n#include <string>\n#include <unordered_set>\n\nnamespace uWS {\n',
  },
  {
    file: 'uWebSockets/src/HttpResponseData.h',
    find: '    /* Current state (content-length sent, status sent, write called, etc */\n    int state = 0;\n',
    replace: `    /* Current state (content-length sent, status sent, write called, etc */
    int state = 0;

    /* memsvc: pipelined bytes read while a response was pending, from the first request behind it on */
    std::string heldPipeline;
    /* memsvc: where in the parsed buffer that first request begins (set when the parser stops at it) */
    char *heldRequestStart = nullptr;
    /* memsvc: the socket, while a parse of heldPipeline is deferred to the loop */
    void *deferredResumeOf = nullptr;
    /* memsvc: sockets whose deferred parse may still run. A socket leaves it when its data is
     * destructed (closed or upgraded), so a deferred parse never touches a freed socket. */
    static inline thread_local std::unordered_set<void *> resumesDeferred;

public:
    ~HttpResponseData() {
        if (deferredResumeOf) {
            resumesDeferred.erase(deferredResumeOf);
        }
    }
private:
`,
  },
  {
    file: 'uWebSockets/src/HttpContext.h',
    find: '    static const int HTTP_RECEIVE_THROUGHPUT_BYTES = 16 * 1024;\n',
    replace: `    static const int HTTP_RECEIVE_THROUGHPUT_BYTES = 16 * 1024;

    /* memsvc: most bytes held behind a pending response (requests and their bodies); beyond it the
     * connection closes. A function: MAX_FALLBACK_SIZE is set at start-up from the environment. */
    static size_t maxHeldPipelineSize() {
        return 256 * MAX_FALLBACK_SIZE;
    }

    /* memsvc: returned by the request handler to stop the parser at a request behind a pending response */
    static inline char pipelineHeldMark = 0;

    /* memsvc: the HTTP data handler, also called with held bytes once the response they wait for ends */
    static inline us_socket_t *(*httpOnData)(us_socket_t *, char *, int) = nullptr;

    /* memsvc: called when a response ends. Held requests are parsed on the next loop iteration,
     * never inside the caller (res.end() in JavaScript) */
    static void deferHeldPipeline(us_socket_t *s) {
        HttpResponseData<SSL> *httpResponseData = (HttpResponseData<SSL> *) us_socket_ext(SSL, s);
        if (httpResponseData->heldPipeline.empty() || httpResponseData->deferredResumeOf) {
            return;
        }
        httpResponseData->deferredResumeOf = s;
        HttpResponseData<SSL>::resumesDeferred.insert(s);
        ((Loop *) us_socket_context_loop(SSL, us_socket_context(SSL, s)))->defer([s]() {
            /* Closed or upgraded meanwhile: the socket may be freed, do not touch it */
            if (!HttpResponseData<SSL>::resumesDeferred.erase(s)) {
                return;
            }
            HttpResponseData<SSL> *httpResponseData = (HttpResponseData<SSL> *) us_socket_ext(SSL, s);
            httpResponseData->deferredResumeOf = nullptr;
            if (us_socket_is_closed(SSL, s) || (httpResponseData->state & HttpResponseData<SSL>::HTTP_RESPONSE_PENDING)) {
                return;
            }
            /* Moved out first: parsing may hold a later request again */
            std::string held = std::move(httpResponseData->heldPipeline);
            httpResponseData->heldPipeline.clear();
            size_t length = held.length();
            /* The parser needs post padding, as in the socket's receive buffer */
            held.resize(length + MINIMUM_HTTP_POST_PADDING);
            httpOnData(s, held.data(), (int) length);
        });
    }
`,
  },
  {
    file: 'uWebSockets/src/HttpContext.h',
    find: `                /* For every request we reset the timeout and hang until user makes action */
                /* Warning: if we are in shutdown state, resetting the timer is a security issue! */
                us_socket_timeout(SSL, (us_socket_t *) s, 0);

                /* Reset httpResponse */
                HttpResponseData<SSL> *httpResponseData = (HttpResponseData<SSL> *) us_socket_ext(SSL, (us_socket_t *) s);
                httpResponseData->offset = 0;

                /* Are we not ready for another request yet? Terminate the connection.
                 * Important for denying async pipelining until, if ever, we want to suppot it.
                 * Otherwise requests can get mixed up on the same connection. We still support sync pipelining. */
                if (httpResponseData->state & HttpResponseData<SSL>::HTTP_RESPONSE_PENDING) {
                    us_socket_close(SSL, (us_socket_t *) s, 0, nullptr);
                    return nullptr;
                }
`,
    replace: `                HttpResponseData<SSL> *httpResponseData = (HttpResponseData<SSL> *) us_socket_ext(SSL, (us_socket_t *) s);

                /* memsvc: not ready for another request yet (the previous response is pending): stop
                 * here, before touching the pending response's offset or timeout. This request and
                 * everything after it are held and parsed once that response ends. */
                if (httpResponseData->state & HttpResponseData<SSL>::HTTP_RESPONSE_PENDING) {
                    httpResponseData->heldRequestStart = (char *) httpRequest->getCaseSensitiveMethod().data();
                    return &pipelineHeldMark;
                }

                /* For every request we reset the timeout and hang until user makes action */
                /* Warning: if we are in shutdown state, resetting the timer is a security issue! */
                us_socket_timeout(SSL, (us_socket_t *) s, 0);

                /* Reset httpResponse */
                httpResponseData->offset = 0;
`,
  },
  {
    file: 'uWebSockets/src/HttpContext.h',
    find: 'us_socket_context_on_data(SSL, getSocketContext(), [](us_socket_t *s, char *data, int length) {\n',
    replace:
      'us_socket_context_on_data(SSL, getSocketContext(), httpOnData = [](us_socket_t *s, char *data, int length) -> us_socket_t * {\n',
  },
  {
    file: 'uWebSockets/src/HttpContext.h',
    find: '            /* Cork this socket */\n            ((AsyncSocket<SSL> *) s)->cork();\n',
    replace: `            /* memsvc: while requests are held behind a pending response, what arrives queues behind them */
            if (!httpResponseData->heldPipeline.empty()) {
                if (httpResponseData->heldPipeline.length() + (size_t) length > maxHeldPipelineSize()) {
                    us_socket_close(SSL, s, 0, nullptr);
                    return s;
                }
                httpResponseData->heldPipeline.append(data, (size_t) length);
                return s;
            }
            /* memsvc: the parser may copy the start of data into its fallback buffer; a request held there needs the rest */
            size_t fallbackBefore = httpResponseData->fallback.length();

            /* Cork this socket */
            ((AsyncSocket<SSL> *) s)->cork();
`,
  },
  {
    file: 'uWebSockets/src/HttpContext.h',
    find: '            httpContextData->isParsingHttp = false;\n',
    replace: `            httpContextData->isParsingHttp = false;

            /* memsvc: the parser stopped at a request behind a pending response: hold it and the rest */
            if (returnedSocket == &pipelineHeldMark) {
                char *start = httpResponseData->heldRequestStart;
                std::string &fallback = httpResponseData->fallback;
                if ((uintptr_t) start >= (uintptr_t) data && (uintptr_t) start <= (uintptr_t) (data + length)) {
                    httpResponseData->heldPipeline.assign(start, (size_t) (data + length - start));
                } else {
                    /* It began in the fallback buffer, which took the first copiedFromData bytes of data */
                    size_t copiedFromData = fallback.length() - fallbackBefore;
                    httpResponseData->heldPipeline.assign(start, (size_t) (fallback.data() + fallback.length() - start));
                    httpResponseData->heldPipeline.append(data + copiedFromData, (size_t) length - copiedFromData);
                    fallback.clear();
                }
                if (httpResponseData->heldPipeline.length() > maxHeldPipelineSize()) {
                    us_socket_close(SSL, s, 0, nullptr);
                    returnedSocket = nullptr;
                } else {
                    returnedSocket = s;
                }
            }
`,
  },
  {
    file: 'uWebSockets/src/HttpResponse.h',
    find: '            Super::write("\\r\\n0\\r\\n\\r\\n", 7);\n\n            httpResponseData->markDone();\n',
    replace:
      '            Super::write("\\r\\n0\\r\\n\\r\\n", 7);\n\n            httpResponseData->markDone();\n            /* memsvc: requests held behind this response may go now */\n            HttpContext<SSL>::deferHeldPipeline((us_socket_t *) this);\n',
  },
  {
    file: 'uWebSockets/src/HttpResponse.h',
    find: '            if (httpResponseData->offset == totalSize || !data.length()) {\n                httpResponseData->markDone();\n',
    replace:
      '            if (httpResponseData->offset == totalSize || !data.length()) {\n                httpResponseData->markDone();\n                /* memsvc: requests held behind this response may go now */\n                HttpContext<SSL>::deferHeldPipeline((us_socket_t *) this);\n',
  },
  // 7. Errors uWS answers itself (a request it cannot parse, a request line or headers too large)
  //    carry the REST API's one JSON error shape instead of an HTML page naming the server.
  {
    file: 'uWebSockets/src/HttpErrors.h',
    find: '    "HTTP/1.1 505 HTTP Version Not Supported\\r\\nConnection: close\\r\\n\\r\\n<h1>HTTP Version Not Supported</h1><p>This server does not support HTTP/1.0.</p><hr><i>uWebSockets/20 Server</i>",\n    "HTTP/1.1 431 Request Header Fields Too Large\\r\\nConnection: close\\r\\n\\r\\n<h1>Request Header Fields Too Large</h1><hr><i>uWebSockets/20 Server</i>",\n    "HTTP/1.1 400 Bad Request\\r\\nConnection: close\\r\\n\\r\\n<h1>Bad Request</h1><hr><i>uWebSockets/20 Server</i>",\n',
    replace: [
      jsonParserError(505, 'HTTP Version Not Supported', 'only HTTP/1.1 and HTTP/1.0 are served'),
      jsonParserError(
        431,
        'Request Header Fields Too Large',
        'the request line or headers are larger than the server accepts',
      ),
      jsonParserError(400, 'Bad Request', 'the request is not valid HTTP/1.1'),
    ].join(''),
  },
  // 8. Lingering close: a response that closes the connection (Connection: close, a refused or unread
  //    body) sends FIN and then reads and discards what the client still sends, for up to
  //    HTTP_LINGER_S, before closing; upstream closed at once, and a client still writing its body
  //    met a reset (EPIPE) instead of the answer. The four places that close after a FIN:
  {
    file: 'uWebSockets/src/HttpResponseData.h',
    find: 'template <bool SSL>\nstruct HttpResponseData : AsyncSocketData<SSL>, HttpParser {\n',
    replace:
      "/* memsvc: how long a socket that has sent its FIN keeps reading (and dropping) what its client still sends, as nginx's lingering close */\nstatic const int HTTP_LINGER_S = 5;\n\ntemplate <bool SSL>\nstruct HttpResponseData : AsyncSocketData<SSL>, HttpParser {\n",
  },
  lingerInsteadOfClose('uWebSockets/src/HttpResponse.h', 'this', 28, 32),
  lingerInsteadOfClose('uWebSockets/src/HttpResponse.h', 'this', 32, 32),
  lingerInsteadOfClose('uWebSockets/src/HttpResponse.h', 'this', 24, 24),
  lingerInsteadOfClose('uWebSockets/src/HttpContext.h', 's', 28, 29),
  {
    file: 'uWebSockets/src/HttpContext.h',
    find: '                        /* We need to force close after sending FIN since we want to hinder\n                         * clients from keeping to send their huge data */\n                        asyncSocket->close();\n',
    replace:
      "                        /* memsvc: lingering close, the socket closes on the client's FIN or after HTTP_LINGER_S */\n                        asyncSocket->timeout(HTTP_LINGER_S);\n",
  },
]

/**
 * Change 8 at one of the places that force-close after a FIN: the socket (`this` or `s`) gets the
 * linger timeout instead. While shut down, uWS drops what it reads (HttpContext's data handler)
 * and its timeout, which reading no longer renews, ends the socket.
 */
function lingerInsteadOfClose(file: string, socket: string, indent: number, commentIndent: number): SourceEdit {
  const pad = ' '.repeat(indent)
  const find = `${pad}/* We need to force close after sending FIN since we want to hinder\n${' '.repeat(commentIndent)}* clients from keeping to send their huge data */\n${pad}((AsyncSocket<SSL> *) ${socket})->close();\n`
  const replace = `${pad}/* memsvc: lingering close, the socket closes on the client's FIN or after HTTP_LINGER_S */\n${pad}((AsyncSocket<SSL> *) ${socket})->timeout(HTTP_LINGER_S);\n`
  return { file, find, replace }
}

/** One C++ string literal: a complete HTTP response whose body is the REST API's error shape. */
function jsonParserError(status: number, reason: string, message: string): string {
  const body = JSON.stringify({ error: { code: status, status: 'INVALID_ARGUMENT', message, details: [] } })
  const head = `HTTP/1.1 ${status} ${reason}\\r\\nConnection: close\\r\\nContent-Type: application/json; charset=utf-8\\r\\nContent-Length: ${Buffer.byteLength(body)}\\r\\n\\r\\n`
  return `    "${head}${body.replaceAll('"', '\\"')}",\n`
}

const NODE_HEADERS = path.join('include', 'node')
const COMMON_FLAGS = ['-DLIBUS_USE_LIBUV', '-DLIBUS_USE_OPENSSL', '-pthread', '-flto', '-O3', '-fPIC', '-c']
const C_SOURCES = [
  'uWebSockets/uSockets/src/*.c',
  'uWebSockets/uSockets/src/eventing/*.c',
  'uWebSockets/uSockets/src/crypto/*.c',
]
/** Include directories and sources are relative to the binding's root. */
const C_INCLUDES = ['uWebSockets/uSockets/src']
const C_FLAGS = COMMON_FLAGS
/**
 * LIBUS_USE_QUIC only makes quic.h declare its types, which the binding's templates
 * name; nothing QUIC is compiled (quic.c is built without it) or linked, and
 * checkNoQuic() proves it on the result.
 */
const CXX_FLAGS = [
  ...COMMON_FLAGS,
  '-std=c++20',
  '-DUWS_WITH_PROXY',
  '-DUWS_REMOTE_ADDRESS_USERSPACE',
  '-DLIBUS_USE_QUIC',
]
const CXX_INCLUDES = ['uWebSockets/uSockets/src', 'uWebSockets/src']
const CXX_SOURCES = ['src/addon.cpp', 'uWebSockets/uSockets/src/crypto/sni_tree.cpp']
/** libstdc++ and libgcc go in statically; OpenSSL, zlib and libuv come from the node binary. */
const LINK_FLAGS = ['-pthread', '-flto', '-O3', '-std=c++20', '-shared', '-static-libstdc++', '-static-libgcc', '-s']
/** Debian 12's glibc: the addon must not need anything newer. */
export const MAX_GLIBC: [number, number] = [2, 36]

export interface UwsAddonOptions {
  root: string
  /** Scratch directory for the unpacked sources and object files. */
  workDir: string
  /** Where compiled addons are kept, one per input hash. */
  cacheDir: string
  /** The pinned node package: bin/node and include/node. */
  nodePackageDir: string
  output: string
}

export interface UwsAddonResult {
  output: string
  cached: boolean
  glibc: string[]
}

/** What the compile and the checks run; Debian's build-essential brings all three. */
const BUILD_TOOLS = ['gcc', 'g++', 'objdump']
const BUILD_TOOLS_PACKAGE = 'build-essential'

const hasTool = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0

/**
 * Installs build-essential when a tool is missing and we may (root with apt-get, as on
 * the project's machines and in CI); otherwise says what to install.
 */
export function ensureBuildTools(): void {
  const missing = BUILD_TOOLS.filter((tool) => !hasTool(tool))
  if (missing.length === 0) return
  if (process.getuid?.() !== 0 || !hasTool('apt-get')) {
    throw new Error(
      `${missing.join(', ')} missing: compiling the uWebSockets.js addon needs ${BUILD_TOOLS_PACKAGE} (apt-get install ${BUILD_TOOLS_PACKAGE})`,
    )
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  console.log(`  ${missing.join(', ')} missing: installing ${BUILD_TOOLS_PACKAGE}`)
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env })
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', BUILD_TOOLS_PACKAGE], {
    stdio: 'inherit',
    env,
  })
}

function toolVersion(tool: string): string {
  return execFileSync(tool, ['--version'], { encoding: 'utf8' }).split('\n')[0]!
}

function inputHash(options: UwsAddonOptions, sources: UwsSources): string {
  const hash = crypto.createHash('sha256')
  for (const archive of sources.archives)
    hash.update(fs.readFileSync(path.join(options.root, UWS_SOURCE_DIR, archive.file)))
  hash.update(
    JSON.stringify({
      SOURCE_EDITS,
      C_FLAGS,
      C_INCLUDES,
      C_SOURCES,
      CXX_FLAGS,
      CXX_INCLUDES,
      CXX_SOURCES,
      LINK_FLAGS,
      gcc: toolVersion('gcc'),
      gxx: toolVersion('g++'),
    }),
  )
  hash.update(fs.readFileSync(path.join(options.nodePackageDir, NODE_HEADERS, 'node_version.h')))
  return hash.digest('hex').slice(0, 16)
}

function unpack(options: UwsAddonOptions, sources: UwsSources): string {
  const tree = path.join(options.workDir, 'uws-src')
  fs.rmSync(tree, { recursive: true, force: true })
  for (const archive of sources.archives) {
    const file = path.join(options.root, UWS_SOURCE_DIR, archive.file)
    const digest = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')
    if (digest !== archive.sha256) throw new Error(`${file} has sha256 ${digest}, sources.json says ${archive.sha256}`)
    const target = path.join(tree, archive.extractTo)
    fs.mkdirSync(target, { recursive: true })
    execFileSync('tar', ['-xzf', file, '-C', target, '--strip-components=1', archive.topDir])
  }
  return tree
}

function applyEdits(tree: string): void {
  for (const edit of SOURCE_EDITS) {
    const file = path.join(tree, edit.file)
    const text = fs.readFileSync(file, 'utf8')
    const count = text.split(edit.find).length - 1
    if (count !== 1)
      throw new Error(
        `uWS source edit for ${edit.file} matches ${count} times, expected once: ${edit.find.slice(0, 80)}`,
      )
    fs.writeFileSync(
      file,
      text.replace(edit.find, () => edit.replace),
    )
  }
}

/** Runs one compiler; rejects with its output on failure. Globs go through the shell. */
function compile(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `${command} ${args.join(' ')}`], { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(
            new Error(
              `${command} failed (${code}):\n${stderr
                .split('\n')
                .filter((line) => /error/.test(line))
                .slice(0, 20)
                .join('\n')}`,
            ),
          ),
    )
  })
}

async function compileAddon(tree: string, headers: string, output: string): Promise<void> {
  const objects = path.join(tree, 'objects')
  fs.mkdirSync(objects)
  // Objects go to objects/, one level below the binding's root.
  const fromObjects = (paths: string[]) => paths.map((file) => `../${file}`)
  const includes = (dirs: string[]) => [...fromObjects(dirs), headers].flatMap((dir) => ['-I', dir])
  // C and C++ in parallel: the machine has two cores and addon.cpp alone takes most of the time.
  await Promise.all([
    compile('gcc', [...C_FLAGS, ...includes(C_INCLUDES), ...fromObjects(C_SOURCES)], objects),
    compile('g++', [...CXX_FLAGS, ...includes(CXX_INCLUDES), ...fromObjects(CXX_SOURCES)], objects),
  ])
  await compile('g++', [...LINK_FLAGS, '*.o', '-o', output], objects)
}

/** The GLIBC_x.y versions the addon's dynamic symbols need; fails above MAX_GLIBC. */
export function checkGlibc(addon: string): string[] {
  const table = execFileSync('objdump', ['-T', addon], { encoding: 'utf8' })
  const versions = [...new Set([...table.matchAll(/GLIBC_(\d+)\.(\d+)(?:\.\d+)?/g)].map((match) => match[0]))]
  const numeric = (version: string) => version.slice('GLIBC_'.length).split('.').map(Number)
  versions.sort((a, b) => numeric(a)[0]! - numeric(b)[0]! || numeric(a)[1]! - numeric(b)[1]!)
  const newest = versions.at(-1)
  if (newest) {
    const [major, minor] = numeric(newest)
    if (major! > MAX_GLIBC[0] || (major === MAX_GLIBC[0] && minor! > MAX_GLIBC[1])) {
      throw new Error(`${addon} needs ${newest}; hosts with glibc ${MAX_GLIBC.join('.')} could not load it`)
    }
  }
  return versions
}

function checkNoQuic(addon: string): void {
  const table = execFileSync('objdump', ['-T', addon], { encoding: 'utf8' })
  if (/\bus_quic_/.test(table))
    throw new Error(`${addon} references QUIC functions; it was meant to be built without QUIC`)
}

/** Loads the addon in the pinned node and checks it has the App and SSLApp we use. */
function checkLoads(nodeBinary: string, addon: string): void {
  const probe = `const m={exports:{}};process.dlopen(m,${JSON.stringify(addon)});for(const k of ['App','SSLApp'])if(typeof m.exports[k]!=='function')throw new Error('no '+k+' export');`
  const result = spawnSync(nodeBinary, ['-e', probe], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`the uWS addon does not load in ${nodeBinary}: ${result.stderr}`)
}

export async function buildUwsAddon(options: UwsAddonOptions): Promise<UwsAddonResult> {
  const sources = readUwsSources(options.root)
  const nodeBinary = path.join(options.nodePackageDir, 'bin', 'node')
  const cached = path.join(options.cacheDir, `uws-${inputHash(options, sources)}.node`)
  const hit = fs.existsSync(cached)
  if (!hit) {
    const tree = unpack(options, sources)
    applyEdits(tree)
    const built = path.join(tree, 'uws.node')
    await compileAddon(tree, path.join(options.nodePackageDir, NODE_HEADERS), built)
    checkGlibc(built)
    checkNoQuic(built)
    checkLoads(nodeBinary, built)
    fs.mkdirSync(options.cacheDir, { recursive: true })
    // Rename into place, so a concurrent or interrupted build never sees half a file.
    fs.copyFileSync(built, `${cached}.partial`)
    fs.renameSync(`${cached}.partial`, cached)
    fs.rmSync(tree, { recursive: true, force: true })
  }
  const glibc = checkGlibc(cached)
  fs.mkdirSync(path.dirname(options.output), { recursive: true })
  fs.copyFileSync(cached, options.output)
  return { output: options.output, cached: hit, glibc }
}
