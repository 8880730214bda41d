package pgjournal

// SchemaV1 returns the DDL of schema version 1 in schema, for the upgrade
// test.
func SchemaV1(schema string) string { return qualify(migrations[0], schema) }

// WorkChannel is workChannel, for the tests of NotifyWork.
func WorkChannel(schema string) string { return workChannel(schema) }
