/*
 * mongo-java-server 1.47.0's AddFieldsStage (mongo-java-server-core-1.47.0-sources.jar, BSD License,
 * Copyright (c) Benedikt Waldvogel), with putRecursively changed. The jar is built without the
 * original class (pom.xml, the shade plugin's filter).
 *
 * Why: the stock stage merged every object an expression yielded into the field, and evaluated its
 * fields again as expressions: `$addFields: { root: "$$ROOT" }` failed on a stored "$$ROOT diesel",
 * and "$b" inside a copied subdocument was read as the field b. It also wrote into the input's own
 * subdocuments (the in-memory store's documents). As in MongoDB, an object literal in the
 * specification sets its fields inside the field's document (a copy), each expression evaluated
 * once against the input document, and any other expression's value replaces the field.
 */
package de.bwaldvogel.mongo.backend.aggregation.stage;

import java.util.Map.Entry;
import java.util.stream.Stream;

import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.aggregation.Expression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.exception.MongoServerError;

public class AddFieldsStage implements AggregationStage {

    private final Document addFields;

    public AddFieldsStage(Document addFields) {
        if (addFields.isEmpty()) {
            throw new MongoServerError(40177, "Invalid $addFields :: caused by :: specification must have at least one field");
        }
        this.addFields = addFields;
    }

    @Override
    public String name() {
        return "$addFields";
    }

    @Override
    public Stream<Document> apply(Stream<Document> stream) {
        return stream.map(this::projectDocument);
    }

    Document projectDocument(Document document) {
        Document clone = document.clone();
        putRecursively(clone, addFields, document);
        return clone;
    }

    private static boolean isObjectLiteral(Object specification) {
        if (!(specification instanceof Document) || ((Document) specification).isEmpty()) {
            return false;
        }
        return ((Document) specification).keySet().stream().noneMatch(key -> key.startsWith("$"));
    }

    private void putRecursively(Document target, Document specification, Document input) {
        for (Entry<String, Object> entry : specification.entrySet()) {
            String key = entry.getKey();
            if (isObjectLiteral(entry.getValue())) {
                Object oldValue = target.get(key);
                Document subDocument = oldValue instanceof Document ? ((Document) oldValue).clone() : new Document();
                putRecursively(subDocument, (Document) entry.getValue(), input);
                target.put(key, subDocument);
                continue;
            }
            Object value = Expression.evaluateDocument(entry.getValue(), input);
            if (value instanceof Missing) {
                target.remove(key);
            } else {
                target.put(key, value);
            }
        }
    }

}
