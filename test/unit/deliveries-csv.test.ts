import t from 'tap';
import { readFileSync } from 'node:fs';
import { CSV_HEADER_RE, CsvError, csvRecords, deliveryRow, parseDeliveriesCsv } from '../../lib/trips/deliveries-csv.ts';

const records = (text: string) => [...csvRecords(text)].map((r) => [r.line, ...r.fields]);

t.test('RFC 4180 records: quotes, doubled quotes, CRLF, blank lines, a byte-order mark', async (t) => {
  t.same(records('\uFEFFa,b\r\n"x, y","say ""hi"""\n\n1,\n'), [
    [1, 'a', 'b'],
    [2, 'x, y', 'say "hi"'],
    [4, '1', ''],
  ]);
  t.same(
    records('a,"two\nlines"\nb,c'),
    [
      [1, 'a', 'two\nlines'],
      [3, 'b', 'c'],
    ],
    'a quoted line break: the next record starts two lines on',
  );
  t.same(records('a,b'), [[1, 'a', 'b']], 'no final line break');
  t.same(
    [...csvRecords('a\nb,"open\nc,d\n')],
    [
      { line: 1, fields: ['a'] },
      { line: 2, fields: ['b', 'open\nc,d\n'], unclosed: true },
    ],
    'a quote never closed runs to the end',
  );
});

t.test('one row: values checked, each problem named', async (t) => {
  const ok = deliveryRow(2, {
    tripId: 'T-1',
    shipmentId: 'S-1',
    productCode: '15101505',
    offloaded: ' 19980.5 ',
    offloadDate: '2026-03-10 09:00',
    ticket: 'TK 1',
  });
  t.same(
    ok,
    {
      line: 2,
      tripId: 'T-1',
      shipmentId: 'S-1',
      productCode: '15101505',
      offloaded: 19_980.5,
      offloadDate: Date.parse('2026-03-10T15:00:00Z'),
      ticket: 'TK 1',
      problems: [],
    },
    'wall time is Mexico City (UTC−6 in March 2026)',
  );
  t.equal(
    deliveryRow(2, { tripId: 'T', shipmentId: 'S', productCode: '15101505', offloaded: '1', offloadDate: '2026-03-10T09:00:00Z' }).offloadDate,
    Date.parse('2026-03-10T09:00:00Z'),
    'an offset is honoured',
  );
  t.equal(deliveryRow(2, { tripId: 'T', shipmentId: 'S', productCode: '15101505', offloaded: '1', offloadDate: '2026-03-10 09:00' }).ticket, null, 'no ticket');
  const bad = deliveryRow(3, { tripId: 'T/1', shipmentId: '', productCode: '1510150', offloaded: '1,234', offloadDate: '10/03/2026', ticket: 'ñ' });
  t.same(bad.problems, [
    'shipmentId is empty',
    "tripId \"T/1\" is not an id of this service (letters, digits, '&', 'Ñ', '.', '_', '-'; at most 64)",
    'productCode "1510150" is not a SAT product key (8 digits)',
    'offloaded "1,234" is not a number of litres (digits and a decimal point, e.g. 30952.5)',
    'offloadDate "10/03/2026" is not a date and time (YYYY-MM-DD HH:mm, Mexico City, or with Z/±hh:mm)',
    'ticket "ñ" is not a ticket reference (letters, digits, space and . _ / # : -; at most 64)',
  ]);
  t.match(
    deliveryRow(2, { tripId: 'T', shipmentId: 'S', productCode: '15101505', offloaded: '1', offloadDate: '2026-02-30 09:00' }).problems,
    [/offloadDate "2026-02-30 09:00" is not a date/],
    'a day that does not exist',
  );
  t.match(deliveryRow(2, { tripId: 'T', shipmentId: 'S', productCode: '15101505', offloaded: '2000000', offloadDate: '2026-03-10 09:00' }).problems, [
    /more than 1,000,000 litres/,
  ]);
});

t.test("the spec's pattern for the CSV body is the parser's header test", async (t) => {
  const spec = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
  t.equal(spec.paths['/api/deliveries/csv'].post.requestBody.content['text/csv'].schema.pattern, CSV_HEADER_RE.source);
});

t.test('the file: the template header, rows with their lines', async (t) => {
  const rows = parseDeliveriesCsv('tripId,shipmentId,productCode,offloaded,offloadDate\nT-1,S-1,15101505,100,2026-03-10 09:00\nT-1,S-1,15101514\n', 10);
  t.same(
    rows.map((r) => [r.line, r.tripId, r.productCode, r.offloaded, r.problems]),
    [
      [2, 'T-1', '15101505', 100, []],
      [3, 'T-1', '15101514', Number.NaN, ['3 fields where the header names 5', 'offloaded is empty', 'offloadDate is empty']],
    ],
  );
  const withTicket = parseDeliveriesCsv(
    '\uFEFFtripId,shipmentId,productCode,offloaded,offloadDate,ticket\r\nT-1,S-1,15101505,100,2026-03-10 09:00,TK-1\r\n',
    10,
  );
  t.equal(withTicket[0]!.ticket, 'TK-1');
  t.same(parseDeliveriesCsv('tripId,shipmentId,productCode,offloaded,offloadDate', 10), [], 'no rows: nothing to record');
  const unclosed = parseDeliveriesCsv(
    'tripId,shipmentId,productCode,offloaded,offloadDate\nT-1,S-1,15101505,100,2026-03-10 09:00\n"T-2,S-1,15101505,100,2026-03-10 09:00\n',
    10,
  );
  t.same(
    unclosed.map((r) => [r.line, r.problems[0]]),
    [
      [2, undefined],
      [3, 'a quoted field opened on line 3 is never closed (the rest of the file is part of it)'],
    ],
  );
  const row = 'T,S,15101505,1,2026-03-10 09:00\n';
  t.throws(
    () => parseDeliveriesCsv(`tripId,shipmentId,productCode,offloaded,offloadDate\n${row.repeat(3)}`, 2),
    new CsvError(['more than 2 lines after the header (line 4 is past them): one request holds at most 2; send the rest in another file']),
    'more rows than the maximum: the file refused whole',
  );
  t.equal(parseDeliveriesCsv(`tripId,shipmentId,productCode,offloaded,offloadDate\n${row.repeat(2)}`, 2).length, 2, 'the maximum itself is read');
});

t.test('a first line that is not the template header refuses the file', async (t) => {
  const refused = (text: string) => {
    try {
      parseDeliveriesCsv(text, 10);
      return null;
    } catch (err) {
      return (err as CsvError).details;
    }
  };
  t.same(refused(''), ['the file is empty: the first line is the header tripId,shipmentId,productCode,offloaded,offloadDate[,ticket]']);
  t.same(refused('tripId,shipmentId,productCode,litros,offloadDate\n'), [
    'header (line 1): column "litros" is not one of tripId, shipmentId, productCode, offloaded, offloadDate, ticket (names are case-sensitive, without spaces)',
    'header (line 1): column offloaded is missing',
    'header (line 1): the first line must be exactly tripId,shipmentId,productCode,offloaded,offloadDate or tripId,shipmentId,productCode,offloaded,offloadDate,ticket',
  ]);
  for (const header of [
    'TripId,shipmentId,productCode,offloaded,offloadDate',
    'shipmentId,tripId,productCode,offloaded,offloadDate',
    'tripId;shipmentId;productCode;offloaded;offloadDate',
    'tripId,shipmentId,productCode,offloaded,offloadDate,ticket,notes',
    'tripId, shipmentId,productCode,offloaded,offloadDate',
  ]) {
    t.ok(refused(`${header}\nT,S,15101505,1,2026-03-10 09:00\n`), header);
  }
});
