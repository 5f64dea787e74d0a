/**
 * The consumer matrix (issue 39), openapi-generator's compiled clients: `go`, and `java` with
 * `--library okhttp-gson` and `--library native`, each generated with default options from the
 * document the running service serves at /docs/json (one `batch` run: one JVM), then built as
 * their users build them, offline:
 *
 * - go: a consumer main in the generated module (`cmd/consumer`), `go mod tidy`, `go build` and
 *   `go vet ./...` with Go's module cache as the only proxy (GOPROXY=file://…, no network);
 * - java: a consumer Main beside the generated sources, `mvn -o -q package` on the generated pom
 *   (its own tests compiled and run), then run with the classpath Maven gives.
 *
 * Each calls the first page of financial documents, one document by id in its summary and full
 * forms, the tax summary and the XML import, and what it parsed must be what the service
 * answered (test/helpers/consumer-calls.ts). The generator's jar and every dependency the
 * clients need are fetched by `npm test`'s set-up (scripts/setup-openapi-generator.mjs,
 * scripts/setup-generated-clients.mjs), never here: a missing one fails at once naming the
 * command. The three builds run side by side; each prints its wall time (`# … s`).
 */
import t from 'tap';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { run, startDemoService, toolPath, PERIOD } from './helpers/generator-service.ts';
import { checkOutcome, importXml, readTruth, started, type Outcome } from './helpers/consumer-calls.ts';

t.setTimeout(900_000);

// The tools, set up before tap started (checked here, never fetched).
for (const [cmd, args, what] of [
  ['java', ['-version'], 'Java 11+ (Debian: apt-get install default-jdk-headless)'],
  ['mvn', ['-v'], 'Maven (Debian: apt-get install maven)'],
  ['go', ['version'], 'Go 1.22+ (Debian: apt-get install golang-go)'],
] as const) {
  await run(cmd, [...args]).catch((err: Error) => {
    throw new Error(`openapi-generator's go and java clients need ${what}, then \`node scripts/setup-generated-clients.mjs\`: ${err.message}`);
  });
}
const jar = await toolPath('setup-openapi-generator.mjs', '--print-jar');
await toolPath('setup-generated-clients.mjs', '--print-dir');
const goModCache = (await run('go', ['env', 'GOMODCACHE'])).trim();
/** Go offline: the module cache the set-up filled is the only proxy; its checksums were verified when it was filled. */
const goEnv = { ...process.env, GOPROXY: `file://${goModCache}/cache/download`, GOSUMDB: 'off', GOFLAGS: '' };

const { base, key, docId, work, specFile } = await startDemoService(t, 'consumers-oag', async () => null);
const truth = await readTruth(base, key, docId);

// One run of the generator for the three clients (one JVM, a thread each), default options but the library.
const clients = {
  go: { generatorName: 'go' },
  'java-okhttp-gson': { generatorName: 'java', library: 'okhttp-gson' },
  'java-native': { generatorName: 'java', library: 'native' },
};
const configFiles = await Promise.all(
  Object.entries(clients).map(async ([dir, config]) => {
    const file = path.join(work, `${dir}.json`);
    await writeFile(file, JSON.stringify({ ...config, inputSpec: specFile, outputDir: path.join(work, dir) }));
    return file;
  }),
);
const generated = Date.now();
const generatorLog = await run('java', ['-jar', jar, 'batch', '--fail-fast', '--threads', '3', ...configFiles], { timeout: 300_000 });
t.notMatch(generatorLog, /\bERROR\b/, 'the generator reports no error for any client');
t.comment(`openapi-generator batch (go, java okhttp-gson, java native): ${((Date.now() - generated) / 1000).toFixed(1)} s`);

/** The go consumer: built offline, run; what it printed. */
async function goConsumer(): Promise<string> {
  {
    const out = path.join(work, 'go');
    const xml = path.join(work, 'go-import.xml');
    await writeFile(xml, importXml(1).xml);
    await mkdir(path.join(out, 'cmd', 'consumer'), { recursive: true });
    await writeFile(
      path.join(out, 'cmd', 'consumer', 'main.go'),
      `package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	openapi "github.com/GIT_USER_ID/GIT_REPO_ID"
)

func check(what string, err error) {
	if err == nil {
		return
	}
	var apiErr *openapi.GenericOpenAPIError
	if errors.As(err, &apiErr) {
		fmt.Fprintf(os.Stderr, "%s: %v %s\\n", what, err, apiErr.Body())
	} else {
		fmt.Fprintf(os.Stderr, "%s: %v\\n", what, err)
	}
	os.Exit(1)
}

func main() {
	base, key, docID, xmlPath := os.Args[1], os.Args[2], os.Args[3], os.Args[4]
	cfg := openapi.NewConfiguration()
	cfg.Servers = openapi.ServerConfigurations{{URL: base}}
	cfg.AddDefaultHeader("x-api-key", key)
	c := openapi.NewAPIClient(cfg)
	ctx := context.Background()
	list, _, err := c.FinancialAPI.ListFinancialDocs(ctx).Limit(5).StartDate("${PERIOD.startDate}").EndDate("${PERIOD.endDate}").Execute()
	check("listFinancialDocs", err)
	page := list.FinancialDocsSummaryPage
	if page == nil {
		check("listFinancialDocs", fmt.Errorf("not a summary page"))
	}
	first := ""
	if len(page.Data) > 0 {
		first = page.Data[0].Id
	}
	one, _, err := c.FinancialAPI.GetFinancialDoc(ctx, docID).Execute()
	check("getFinancialDoc", err)
	if one.FinancialSummary == nil {
		check("getFinancialDoc", fmt.Errorf("not a summary"))
	}
	full, _, err := c.FinancialAPI.GetFinancialDoc(ctx, docID).Detail("full").Execute()
	check("getFinancialDoc detail=full", err)
	if full.FinancialDocument == nil {
		check("getFinancialDoc detail=full", fmt.Errorf("not a stored document"))
	}
	tax, _, err := c.TaxAPI.GetTaxSummary(ctx).StartDate("${PERIOD.startDate}").EndDate("${PERIOD.endDate}").Execute()
	check("getTaxSummary", err)
	file, err := os.Open(xmlPath)
	check("open", err)
	report, _, err := c.ImportsAPI.ImportDocumentsXml(ctx).Body(file).Execute()
	check("importDocumentsXml", err)
	f := report.Files[0]
	s, d := one.FinancialSummary, full.FinancialDocument
	out := map[string]any{
		"list":    map[string]any{"detail": fmt.Sprint(page.Detail), "total": page.Meta.Total, "count": len(page.Data), "firstId": first},
		"summary": map[string]any{"id": s.Id, "client": s.Client, "status": s.Status},
		"full":    map[string]any{"id": d.Id, "client": d.Client, "iTot": d.ITot},
		"tax":     map[string]any{"documents": tax.Totals.Documents, "months": len(tax.Months)},
		"import":  map[string]any{"files": report.Summary.Files, "created": report.Summary.Created, "name": f.Name, "status": f.Status, "kind": f.GetKind(), "uuid": f.GetUuid()},
	}
	text, err := json.Marshal(out)
	check("json", err)
	fmt.Println(string(text))
}
`,
    );
    for (const step of [
      ['mod', 'tidy'],
      ['build', '-o', 'consumer-bin', './cmd/consumer'],
      ['vet', './...'],
    ]) {
      await run('go', step, { cwd: out, env: goEnv, timeout: 400_000 }).catch((err: Error) => {
        throw new Error(
          `go ${step.join(' ')} (offline) failed: if a module is missing, rerun \`node scripts/setup-generated-clients.mjs --force\`\n${err.message}`,
        );
      });
    }
    return await run(path.join(out, 'consumer-bin'), [base, key, docId, xml]);
  }
}

/**
 * The consumer's Main: the same for both libraries but for how the key is sent and which JSON library writes what it
 * prints (the one the generated client reads with: Gson for okhttp-gson, Jackson for native), so strings are escaped
 * and the models (enums, DocumentStatus) are written as the service sends them, on one line.
 */
function javaMain(library: string): string {
  const auth = library === 'native' ? 'client.setRequestInterceptor(b -> b.header("x-api-key", a[1]));' : 'client.addDefaultHeader("x-api-key", a[1]);';
  const toJson = library === 'native' ? 'client.getObjectMapper().writeValueAsString(out)' : 'org.openapitools.client.JSON.getGson().toJson(out)';
  return `package consumer;

import java.io.File;
import java.util.LinkedHashMap;
import java.util.Map;
import org.openapitools.client.ApiClient;
import org.openapitools.client.api.FinancialApi;
import org.openapitools.client.api.ImportsApi;
import org.openapitools.client.api.TaxApi;
import org.openapitools.client.model.*;

public class Main {
  /** An object from alternating names and values, in that order. */
  static Map<String, Object> obj(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
    return m;
  }

  public static void main(String[] a) throws Exception {
    ApiClient client = new ApiClient();
    client.${library === 'native' ? 'updateBaseUri' : 'setBasePath'}(a[0]);
    ${auth}
    FinancialApi financial = new FinancialApi(client);
    FinancialDocsResponse list = financial.listFinancialDocs(5, null, "${PERIOD.startDate}", "${PERIOD.endDate}", null, null, null, null, null, null, null, null, null, null, null);
    FinancialDocsSummaryPage page = (FinancialDocsSummaryPage) list.getActualInstance();
    FinancialSummary s = (FinancialSummary) financial.getFinancialDoc(a[2], null).getActualInstance();
    FinancialDocument d = (FinancialDocument) financial.getFinancialDoc(a[2], "full").getActualInstance();
    TaxSummaryResponse tax = new TaxApi(client).getTaxSummary(null, null, "${PERIOD.startDate}", "${PERIOD.endDate}", null, null, null);
    ImportReport report = new ImportsApi(client).importDocumentsXml(new File(a[3]));
    ImportFileResult f = report.getFiles().get(0);
    String first = page.getData().isEmpty() ? "" : page.getData().get(0).getId();
    Map<String, Object> out = obj(
        "list", obj("detail", page.getDetail(), "total", page.getMeta().getTotal(), "count", page.getData().size(), "firstId", first),
        "summary", obj("id", s.getId(), "client", s.getClient(), "status", s.getStatus()),
        "full", obj("id", d.getId(), "client", d.getClient(), "iTot", d.getiTot()),
        "tax", obj("documents", tax.getTotals().getDocuments(), "months", tax.getMonths().size()),
        "import", obj("files", report.getSummary().getFiles(), "created", report.getSummary().getCreated(), "name", f.getName(),
            "status", f.getStatus(), "kind", f.getKind(), "uuid", f.getUuid()));
    System.out.println(${toJson});
  }
}
`;
}

/**
 * The java generator's model test of a oneOf answer holds a test per property of every branch,
 * named after the Java name: ShipmentResponse's TripSummary.id and TripDocument._id (the stored
 * trip's key as served with detail=full) both give \`idTest()\`, and the generated tests do not
 * compile (the client itself does). Served answers stay as they are (clients rely on them), so
 * this is recorded as a todo of the subtest, with the client then built without its tests.
 */
const KNOWN_TEST_FAILURE = /ShipmentResponseTest\.java:\[\d+,\d+\] (error: )?method idTest\(\) is already defined/;
const javaTestsFailed = new Map<string, Error>();

/**
 * The native library's ImportsApi writes every request body with its Jackson ObjectMapper, whatever the media type: the
 * `File` of `POST /api/imports/xml` goes out as a JSON string of its path, not the XML, and the service rightly
 * rejects it (the same kind as OpenAPITools/openapi-generator#19491 and #17801, on the request side). Read from the
 * generated source, so the todo goes away, and the assertion holds, once the generator streams the file.
 */
function writesFileAsJson(importsApi: string): boolean {
  const start = importsApi.indexOf('HttpRequest.Builder importDocumentsXmlRequestBuilder(');
  if (start < 0) return false;
  const end = importsApi.indexOf('\n  }\n', start);
  return importsApi.slice(start, end < 0 ? undefined : end).includes('memberVarObjectMapper.writeValueAsBytes(body)');
}
const javaImportTodo = new Map<string, string>();

/** A java consumer: `mvn -o package`, run; what it printed. */
async function javaConsumer(library: 'okhttp-gson' | 'native', n: number): Promise<string> {
  {
    const out = path.join(work, `java-${library}`);
    const xml = path.join(work, `java-${library}-import.xml`);
    await writeFile(xml, importXml(n).xml);
    await mkdir(path.join(out, 'src', 'main', 'java', 'consumer'), { recursive: true });
    await writeFile(path.join(out, 'src', 'main', 'java', 'consumer', 'Main.java'), javaMain(library));
    const offline = (args: string[]): Promise<string> =>
      run('mvn', ['-o', '-B', '-q', ...args], { cwd: out, timeout: 600_000 }).catch((err: Error) => {
        throw new Error(
          `mvn -o ${args.join(' ')} failed: if a dependency is missing, rerun \`node scripts/setup-generated-clients.mjs --force\`\n${err.message}`,
        );
      });
    // The generated tests too, as \`mvn package\` builds them; one known failure of the generator is recorded, not hidden (below).
    const testsFailed = await offline(['package']).then(
      () => null,
      (err: Error) => err,
    );
    if (testsFailed) {
      if (!KNOWN_TEST_FAILURE.test(testsFailed.message)) throw testsFailed;
      javaTestsFailed.set(library, testsFailed);
      await offline(['-Dmaven.test.skip=true', 'package']);
    }
    const importsApi = await readFile(path.join(out, 'src', 'main', 'java', 'org', 'openapitools', 'client', 'api', 'ImportsApi.java'), 'utf8');
    if (writesFileAsJson(importsApi)) javaImportTodo.set(library, 'ImportsApi writes the XML file as a JSON string of its path (see writesFileAsJson)');
    const cp = path.join(out, 'classpath.txt');
    await offline(['dependency:build-classpath', `-Dmdep.outputFile=${cp}`]);
    const classpath = [path.join(out, 'target', 'classes'), (await readFile(cp, 'utf8')).trim()].join(path.delimiter);
    return await run('java', ['-cp', classpath, 'consumer.Main', base, key, docId, xml]);
  }
}

// The three side by side, started at once; each subtest reads its own outcome. (No assertion before this point: tap ends
// a root test that has asserted and has nothing queued while the file still awaits, and its teardown removes the work.)
const consumers: [string, string, Promise<Outcome>][] = [
  ['go', 'go build and go vet offline', started(goConsumer)],
  ['java okhttp-gson', 'mvn -o -q package', started(() => javaConsumer('okhttp-gson', 2))],
  ['java native', 'mvn -o -q package', started(() => javaConsumer('native', 3))],
];
t.ok(truth.list.count > 0 && truth.tax.documents > 0, `the demo data answers with data (${truth.list.total} documents, ${truth.tax.documents} taxed)`);
for (const [i, [name, how, outcome]] of consumers.entries()) {
  t.test(`openapi-generator ${name}: ${how}, calls the service`, async (t) => {
    const done = await outcome;
    const testsFailed = javaTestsFailed.get(name.replace('java ', ''));
    if (name.startsWith('java')) {
      t.ok(!testsFailed, "the generator's own tests compile", {
        todo: testsFailed ? "ShipmentResponseTest: TripSummary's id and TripDocument's _id are both idTest() (see KNOWN_TEST_FAILURE)" : false,
      });
    }
    checkOutcome(t, `openapi-generator ${name}`, done, truth, i + 1, { import: javaImportTodo.get(name.replace('java ', '')) });
  });
}
