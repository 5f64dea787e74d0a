/*
 * mongo-java-server 1.47.0's FacetStage (mongo-java-server-core-1.47.0-sources.jar, BSD License,
 * Copyright (c) Benedikt Waldvogel), with apply changed: the input is no longer collected whole.
 * The jar is built without the original class (pom.xml, the shade plugin's filter).
 *
 * Why: the stock stage held its whole input in the heap before running the facets, so a year of a
 * large tenant's invoices (1M/1M: discounts-and-shrinkage 366d, one row per invoice with its
 * concept lines) ran the engine's 1,280 MB heap out of memory. Here, as MongoDB's TeeBuffer does,
 * the input is read once and handed to every facet batch by batch: each facet's pipeline runs on
 * its own thread, fed through a bounded queue, so the heap holds a few batches, not the input.
 * Facets with a stage that could change the documents they share, or read other collections, keep
 * the stock behaviour.
 */
package de.bwaldvogel.mongo.backend.aggregation.stage;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Map.Entry;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.DatabaseResolver;
import de.bwaldvogel.mongo.backend.aggregation.Aggregation;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.oplog.Oplog;

public class FacetStage implements AggregationStage {

    /** Stages that only read their input documents (each builds new ones) and no other collection. */
    private static final Set<String> READ_ONLY = Set.of("$match", "$project", "$group", "$unwind", "$sort", "$limit", "$skip", "$bucket");

    /** Documents per batch, and batches queued per facet (system properties, lowered by test/embedded/facet.ts). */
    private static final int BATCH = Math.max(1, Integer.getInteger("embeddedMongo.facet.batch", 512));
    private static final int QUEUED_BATCHES = Math.max(1, Integer.getInteger("embeddedMongo.facet.queued", 4));
    private static final List<Document> END = List.of();

    private final Map<String, Aggregation> facets = new LinkedHashMap<>();

    public FacetStage(Document facetsConfiguration, DatabaseResolver databaseResolver, MongoDatabase database,
                      MongoCollection<?> collection, Oplog oplog) {
        for (Entry<String, Object> entry : facetsConfiguration.entrySet()) {
            Aggregation aggregation = Aggregation.fromPipeline(entry.getValue(), databaseResolver, database, collection, oplog);
            facets.put(entry.getKey(), aggregation);
        }
    }

    @Override
    public String name() {
        return "$facet";
    }

    @Override
    public Stream<Document> apply(Stream<Document> stream) {
        boolean teed = facets.values().stream()
            .allMatch(facet -> facet.getStages().stream().allMatch(stage -> READ_ONLY.contains(stage.name())));
        return Stream.of(teed ? tee(stream) : collected(stream));
    }

    /** The stock behaviour: the whole input in a list, each facet run over it in turn. */
    private Document collected(Stream<Document> stream) {
        List<Document> allDocuments = stream.collect(Collectors.toList());
        Document result = new Document();
        for (Entry<String, Aggregation> entry : facets.entrySet()) {
            Aggregation aggregation = entry.getValue();
            List<Document> documents = aggregation.runStages(allDocuments.stream());
            result.put(entry.getKey(), documents);
        }
        return result;
    }

    /** The input read once, each batch handed to every facet's thread. */
    private Document tee(Stream<Document> stream) {
        List<BlockingQueue<List<Document>>> queues = new ArrayList<>();
        List<CompletableFuture<List<Document>>> results = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (Entry<String, Aggregation> entry : facets.entrySet()) {
            BlockingQueue<List<Document>> queue = new ArrayBlockingQueue<>(QUEUED_BATCHES);
            CompletableFuture<List<Document>> result = new CompletableFuture<>();
            Thread thread = new Thread(() -> {
                try {
                    result.complete(entry.getValue().runStages(drain(queue)));
                } catch (Throwable e) {
                    result.completeExceptionally(e);
                }
            }, "facet-" + entry.getKey());
            thread.setDaemon(true);
            queues.add(queue);
            results.add(result);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
        try {
            List<Document> batch = new ArrayList<>(BATCH);
            for (Iterator<Document> input = stream.iterator(); input.hasNext(); ) {
                batch.add(input.next());
                if (batch.size() == BATCH) {
                    feed(queues, results, batch);
                    batch = new ArrayList<>(BATCH);
                }
            }
            if (!batch.isEmpty()) {
                feed(queues, results, batch);
            }
            feed(queues, results, END);
            Document result = new Document();
            int i = 0;
            for (String name : facets.keySet()) {
                result.put(name, results.get(i++).get());
            }
            return result;
        } catch (ExecutionException e) {
            throw rethrown(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running $facet", e);
        } finally {
            threads.forEach(Thread::interrupt); // no-op for finished facets; stops the others on a failure
        }
    }

    /** Hands a batch to every facet; a facet that failed ends the stage with its error instead of blocking. */
    private static void feed(List<BlockingQueue<List<Document>>> queues, List<CompletableFuture<List<Document>>> results,
                             List<Document> batch) throws InterruptedException, ExecutionException {
        for (int i = 0; i < queues.size(); i++) {
            CompletableFuture<List<Document>> result = results.get(i);
            while (!result.isDone() && !queues.get(i).offer(batch, 50, TimeUnit.MILLISECONDS)) {
                // the facet is still reading its earlier batches
            }
            if (result.isDone()) {
                result.get(); // throws the facet's error; a facet that finished early (a $limit) takes nothing more
            }
        }
    }

    /** The documents handed to one facet, until the end marker. */
    private static Stream<Document> drain(BlockingQueue<List<Document>> queue) {
        Iterator<Document> documents = new Iterator<>() {
            private Iterator<Document> current = List.<Document>of().iterator();
            private boolean ended;

            @Override
            public boolean hasNext() {
                while (!current.hasNext() && !ended) {
                    List<Document> batch;
                    try {
                        batch = queue.take();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("$facet cancelled", e);
                    }
                    if (batch == END) {
                        ended = true;
                    } else {
                        current = batch.iterator();
                    }
                }
                return current.hasNext();
            }

            @Override
            public Document next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return current.next();
            }
        };
        return StreamSupport.stream(java.util.Spliterators.spliteratorUnknownSize(documents, java.util.Spliterator.ORDERED), false);
    }

    private static RuntimeException rethrown(Throwable cause) {
        if (cause instanceof RuntimeException e) {
            return e;
        }
        if (cause instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(cause);
    }

    @Override
    public boolean isModifying() {
        return facets.values().stream().anyMatch(Aggregation::isModifying);
    }
}
