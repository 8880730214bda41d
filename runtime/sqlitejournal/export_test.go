package sqlitejournal

// SchemaV1 is the DDL of schema version 1, for the upgrade test.
var SchemaV1 = migrations[0]
