package local.freight.embeddedmongo;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.wire.MongoDatabaseHandler;
import de.bwaldvogel.mongo.wire.MongoExceptionHandler;
import de.bwaldvogel.mongo.wire.MongoWireMessageEncoder;
import de.bwaldvogel.mongo.wire.MongoWireProtocolHandler;
import de.bwaldvogel.mongo.wire.MongoWireReplyEncoder;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.GlobalEventExecutor;

/**
 * mongo-java-server's wire server ({@code MongoServer}) with one thread per connection, as mongod
 * has. The stock server runs every command on the Netty I/O loop its connection was assigned to
 * (2 per core, round robin): a long aggregation then stalls every connection sharing that loop —
 * another tenant's list page, or the driver's heartbeat, whose 10 s limit turned a long audit into
 * "database unavailable" for everyone (measured: a ping waited the whole 2.5 s aggregation on 2 of
 * 8 connections). Here the I/O loops only read and frame messages; each connection decodes, runs
 * and encodes its commands on its own thread, so a slow command delays only its own connection.
 */
final class ConnectionThreadsServer {

    private static final long QUIET_MS = 200;

    private final MongoBackend backend;
    private final Set<EventExecutor> connectionThreads = ConcurrentHashMap.newKeySet();
    private final DefaultThreadFactory threadFactory = new DefaultThreadFactory("mongo-connection", true);
    private EventLoopGroup bossGroup;
    private EventLoopGroup ioGroup;
    private ChannelGroup clients;
    private Channel listening;

    ConnectionThreadsServer(MongoBackend backend) {
        this.backend = backend;
    }

    void bind(SocketAddress address) {
        bossGroup = new NioEventLoopGroup(1, new DefaultThreadFactory("mongo-server-boss", true));
        ioGroup = new NioEventLoopGroup(0, new DefaultThreadFactory("mongo-server-io", true));
        clients = new DefaultChannelGroup("mongodb-channels", GlobalEventExecutor.INSTANCE);
        try {
            listening = new ServerBootstrap()
                .group(bossGroup, ioGroup)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 100)
                .localAddress(address)
                .childOption(ChannelOption.TCP_NODELAY, Boolean.TRUE)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    public void initChannel(SocketChannel ch) {
                        EventExecutor thread = new DefaultEventExecutor(threadFactory);
                        connectionThreads.add(thread);
                        thread.terminationFuture().addListener(f -> connectionThreads.remove(thread));
                        // A quiet period, not 0: the pipeline's own tear-down (inactive, unregistered, handler
                        // removal) reaches this thread just after the close and must still be accepted.
                        ch.closeFuture().addListener(f -> thread.shutdownGracefully(QUIET_MS, 5_000, TimeUnit.MILLISECONDS));
                        // Same handlers and order as MongoServer; only framing stays on the I/O loop.
                        ch.pipeline().addLast(thread, new MongoWireReplyEncoder(), new MongoWireMessageEncoder());
                        ch.pipeline().addLast(new MongoWireProtocolHandler());
                        ch.pipeline().addLast(thread, new MongoDatabaseHandler(backend, clients), new MongoExceptionHandler());
                    }
                })
                .bind().syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            shutdownNow();
            throw e;
        }
    }

    InetSocketAddress getLocalAddress() {
        return (InetSocketAddress) listening.localAddress();
    }

    /**
     * Stops listening, closes the clients, lets each connection finish the command it is running
     * (as the stock server waits for its I/O loops), then closes the backend.
     */
    void shutdownNow() {
        if (listening != null) {
            listening.close().syncUninterruptibly();
            listening = null;
        }
        if (clients != null) {
            clients.close().syncUninterruptibly();
        }
        for (EventExecutor thread : connectionThreads) {
            thread.shutdownGracefully(QUIET_MS, 5_000, TimeUnit.MILLISECONDS);
        }
        for (EventExecutor thread : connectionThreads) {
            thread.terminationFuture().syncUninterruptibly();
        }
        if (bossGroup != null) {
            bossGroup.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
        }
        if (ioGroup != null) {
            ioGroup.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
        }
        backend.close();
    }
}
