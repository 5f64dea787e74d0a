package local.freight.embeddedmongo;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.UnaryOperator;

import de.bwaldvogel.mongo.backend.AbstractCursor;
import de.bwaldvogel.mongo.bson.Document;

/**
 * A query cursor that reads its documents batch by batch, as getMore asks for them, instead of
 * holding every remaining document from the first batch on (the engine's {@code InMemoryCursor}).
 * One client reads a cursor at a time; the registry hands it from one connection thread to the next.
 */
final class StreamingCursor extends AbstractCursor {

    private final Iterator<Document> documents;
    private final UnaryOperator<List<Document>> project;

    /** {@code documents}: the matching documents, unprojected; {@code project}: applied to each batch. */
    StreamingCursor(long id, Iterator<Document> documents, UnaryOperator<List<Document>> project) {
        super(id);
        this.documents = documents;
        this.project = project;
    }

    @Override
    public synchronized boolean isEmpty() {
        return !documents.hasNext();
    }

    /** Up to {@code numberToReturn} documents (0 or less: all that are left, as the engine's first batch does). */
    @Override
    public synchronized List<Document> takeDocuments(int numberToReturn) {
        List<Document> batch = new ArrayList<>(numberToReturn > 0 ? Math.min(numberToReturn, 1024) : 16);
        while ((numberToReturn <= 0 || batch.size() < numberToReturn) && documents.hasNext()) {
            batch.add(documents.next());
        }
        return project.apply(batch);
    }
}
