//go:build rolling_v1

package main

import (
	"context"
	"fmt"
)

// binary names the version this file is.
const binary = "v1"

// Pipeline is version 1: five steps.
//
//resume:workflow name=rolling.Pipeline
func Pipeline(ctx context.Context, in Order) (Receipt, error) {
	r := Receipt{ID: in.ID}
	stock, err := Fetch(ctx, in.ID, in.N)
	if err != nil {
		return r, err
	}
	price, err := Price(ctx, stock)
	if err != nil {
		return r, err
	}
	charged, err := Charge(ctx, in.ID, price)
	if err != nil {
		return r, err
	}
	parcel, err := Pack(ctx, in.ID, charged)
	if err != nil {
		return r, err
	}
	label, err := Ship(ctx, parcel)
	if err != nil {
		return r, err
	}
	r.Trail = []string{fmt.Sprint(stock), fmt.Sprint(price), fmt.Sprint(charged), parcel, label}
	return r, nil
}

// Fetch counts the order's stock.
//
//resume:step
func Fetch(ctx context.Context, id string, n int) (int, error) {
	record(ctx)
	return n*7 + len(id), nil
}

// Price prices the stock.
//
//resume:step
func Price(ctx context.Context, stock int) (int, error) {
	record(ctx)
	return stock * 3, nil
}

// Charge charges the price.
//
//resume:step
func Charge(ctx context.Context, id string, price int) (int, error) {
	record(ctx)
	return price + 1, nil
}

// Pack packs the order.
//
//resume:step
func Pack(ctx context.Context, id string, charged int) (string, error) {
	record(ctx)
	return fmt.Sprintf("parcel(%s,%d)", id, charged), nil
}

// Ship labels the parcel.
//
//resume:step
func Ship(ctx context.Context, parcel string) (string, error) {
	record(ctx)
	return "label:" + parcel, nil
}
