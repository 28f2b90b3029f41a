/*
 * cubesage test infrastructure: runs a real single-node Elasticsearch from the Maven Central
 * artifacts (org.elasticsearch:elasticsearch + org.elasticsearch.plugin:transport-netty4).
 *
 * It lives in package org.elasticsearch.node because NodeConstruction / NodeServiceProvider
 * (needed to hand the node plugins given as classes, like the ES test framework's MockNode does)
 * are package-private. This is a plain classpath launch (no JPMS), so the split package is fine.
 *
 * Usage:
 *   java -cp "target/classes:target/lib/*" org.elasticsearch.node.CubesageEsLauncher \
 *        --port 9200 --home /tmp/es-home [--cluster-name NAME] [--die-with-parent] [-E key=value ...]
 * (or system properties cubesage.es.port / cubesage.es.home / cubesage.es.cluster).
 *
 * Prints "ES_READY http://127.0.0.1:PORT" on stdout once the node has started and elected
 * itself master; shuts down cleanly on SIGTERM / SIGINT. With --die-with-parent it also exits
 * when its stdin reaches EOF (i.e. the process that started it died).
 */
package org.elasticsearch.node;

import org.elasticsearch.Build;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.transport.TransportAddress;
import org.elasticsearch.env.Environment;
import org.elasticsearch.http.HttpServerTransport;
import org.elasticsearch.index.IndexVersion;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.MockPluginsService;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.transport.netty4.Netty4Plugin;
import org.elasticsearch.xcontent.XContentBuilder;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

public class CubesageEsLauncher extends Node {

    /** Plugins loaded from the classpath. */
    static final List<Class<? extends Plugin>> PLUGINS = List.of(Netty4Plugin.class, RootInfoPlugin.class);

    CubesageEsLauncher(Environment environment, Collection<Class<? extends Plugin>> plugins) {
        super(NodeConstruction.prepareConstruction(environment, null, new NodeServiceProvider() {
            @Override
            PluginsService newPluginService(Environment env, PluginsLoader pluginsLoader) {
                return new MockPluginsService(env.settings(), env, plugins);
            }
        }, true));
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("log4j.shutdownHookEnabled", "false");
        System.setProperty("log4j2.disable.jmx", "true");

        String port = System.getProperty("cubesage.es.port", "9200");
        String home = System.getProperty("cubesage.es.home");
        String cluster = System.getProperty("cubesage.es.cluster", "cubesage-test");
        boolean dieWithParent = Boolean.getBoolean("cubesage.es.die_with_parent");
        Settings.Builder extra = Settings.builder();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--port" -> port = args[++i];
                case "--home" -> home = args[++i];
                case "--cluster-name" -> cluster = args[++i];
                case "--die-with-parent" -> dieWithParent = true;
                case "-E" -> {
                    String kv = args[++i];
                    int eq = kv.indexOf('=');
                    if (eq <= 0) throw new IllegalArgumentException("bad -E setting: " + kv);
                    extra.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
                default -> throw new IllegalArgumentException("unknown argument: " + a);
            }
        }
        if (home == null) {
            throw new IllegalArgumentException("--home DIR (or -Dcubesage.es.home) is required");
        }
        Path homeDir = Path.of(home).toAbsolutePath();
        Files.createDirectories(homeDir.resolve("config"));
        Files.createDirectories(homeDir.resolve("data"));
        Files.createDirectories(homeDir.resolve("logs"));
        Files.createDirectories(homeDir.resolve("plugins"));
        Files.createDirectories(homeDir.resolve("modules"));

        Settings settings = Settings.builder()
            .put("path.home", homeDir.toString())
            .put("path.data", homeDir.resolve("data").toString())
            .put("path.logs", homeDir.resolve("logs").toString())
            .put("cluster.name", cluster)
            .put("node.name", "cubesage-node")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", port)
            .put("transport.port", "0")
            .put("http.type", Netty4Plugin.NETTY_HTTP_TRANSPORT_NAME)
            .put("transport.type", Netty4Plugin.NETTY_TRANSPORT_NAME)
            // test server: never go read-only because the disk is fairly full
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", true)
            .put(extra.build())
            .build();

        LogConfigurator.registerErrorListener();
        LogConfigurator.setNodeName("cubesage-node");
        LogConfigurator.setClusterName(cluster);
        LogConfigurator.configureWithoutConfig(settings);

        Environment env = InternalSettingsPreparer.prepareEnvironment(settings, Collections.emptyMap(), null, () -> "cubesage-node");
        long t0 = System.nanoTime();
        CubesageEsLauncher node = new CubesageEsLauncher(env, PLUGINS);

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                System.out.println("ES_STOPPED");
                System.out.flush();
                stopped.countDown();
            }
        }, "cubesage-es-shutdown"));

        if (dieWithParent) {
            // The parent keeps our stdin open; when it goes away (even by SIGKILL) stdin hits EOF and we exit.
            Thread watchdog = new Thread(() -> {
                try {
                    while (System.in.read() != -1) {
                        // ignore input
                    }
                } catch (Exception ignored) {
                    // treat as EOF
                }
                System.exit(0);
            }, "cubesage-parent-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
        }

        node.start();
        TransportAddress http = node.injector().getInstance(HttpServerTransport.class).boundAddress().publishAddress();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("ES_READY http://127.0.0.1:" + http.getPort() + " (node started in " + ms + " ms)");
        System.out.flush();
        stopped.await();
    }

    /** Serves GET / and HEAD / (in a real distribution this is the rest-root module, not on Maven Central). */
    public static class RootInfoPlugin extends Plugin implements ActionPlugin {
        static volatile ClusterService clusterService;

        @Override
        public Collection<?> createComponents(PluginServices services) {
            clusterService = services.clusterService();
            return Collections.emptyList();
        }

        @Override
        public Collection<RestHandler> getRestHandlers(
            Settings settings,
            org.elasticsearch.common.io.stream.NamedWriteableRegistry namedWriteableRegistry,
            org.elasticsearch.rest.RestController restController,
            org.elasticsearch.common.settings.ClusterSettings clusterSettings,
            org.elasticsearch.common.settings.IndexScopedSettings indexScopedSettings,
            org.elasticsearch.common.settings.SettingsFilter settingsFilter,
            org.elasticsearch.cluster.metadata.IndexNameExpressionResolver indexNameExpressionResolver,
            Supplier<org.elasticsearch.cluster.node.DiscoveryNodes> nodesInCluster,
            Predicate<org.elasticsearch.features.NodeFeature> clusterSupportsFeature
        ) {
            List<RestHandler> handlers = new ArrayList<>();
            handlers.add(new BaseRestHandler() {
                @Override
                public String getName() {
                    return "cubesage_main_action";
                }

                @Override
                public List<Route> routes() {
                    return List.of(new Route(RestRequest.Method.GET, "/"), new Route(RestRequest.Method.HEAD, "/"));
                }

                @Override
                protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
                    return channel -> {
                        if (request.method() == RestRequest.Method.HEAD) {
                            channel.sendResponse(new RestResponse(RestStatus.OK, RestResponse.TEXT_CONTENT_TYPE, ""));
                            return;
                        }
                        ClusterService cs = clusterService;
                        ClusterState state = cs.state();
                        Build build = Build.current();
                        XContentBuilder b = channel.newBuilder();
                        b.startObject();
                        b.field("name", cs.getNodeName());
                        b.field("cluster_name", cs.getClusterName().value());
                        b.field("cluster_uuid", state.metadata().clusterUUID());
                        b.startObject("version");
                        b.field("number", build.qualifiedVersion());
                        b.field("build_flavor", build.flavor());
                        b.field("build_type", build.type().displayName());
                        b.field("build_hash", build.hash());
                        b.field("build_date", build.date());
                        b.field("build_snapshot", build.isSnapshot());
                        b.field("lucene_version", IndexVersion.current().luceneVersion().toString());
                        b.field("minimum_wire_compatibility_version", build.minWireCompatVersion());
                        b.field("minimum_index_compatibility_version", build.minIndexCompatVersion());
                        b.endObject();
                        b.field("tagline", "You Know, for Search");
                        b.endObject();
                        channel.sendResponse(new RestResponse(RestStatus.OK, b));
                    };
                }
            });
            return handlers;
        }
    }
}
